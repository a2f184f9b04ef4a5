"""Rating arithmetic, pure: Glicko-2 for two-seat games and the Weng-Lin Plackett-Luce model for 3-4 riders.

No I/O and no clock: every function takes the values it needs (ratings, results, the days since a player's last
rated game) and returns new values. `server/rated.py` applies them to rooms and the store.

Glicko-2 follows Glickman's "Example of the Glicko-2 system" (glicko.net/glicko/glicko2.pdf), steps 1-8, with
the Illinois iteration of step 5.4, and lichess's choices around it (lila's `Glicko.scala` and
`glicko2/RatingCalculator.scala`): a new player is 1500 / RD 500 / volatility 0.09, tau 0.75, the RD stays in
45..500 and the volatility at most 0.1, the rating at least 400, one game moves a rating by at most 700 points,
and a rating is provisional ("?") while its RD is 110 or more. lichess rates every game at once as one rating
period (step 6 with one elapsed period) and lets the RD grow between games at 0.21436 rating periods a day
(phi' = sqrt(phi^2 + days * 0.21436 * sigma^2), lila's `previewDeviation`), so a player idle for a year goes
from RD 60 to about 110; `idle` does the same here.

The multiplayer model is Algorithm 1 of Weng and Lin, "A Bayesian Approximation Method for Online Ranking"
(JMLR 12, 2011) with the Plackett-Luce likelihood (their eq. 50-52), as the `openskill` libraries implement it:
c^2 = sum over teams of (sigma_team^2 + beta^2), gamma = sigma_team / c, kappa = 0.0001. It is re-derived here
(no dependency) and checked against openskill.js's test fixtures. Riders are one-player teams; equal ranks tie.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

GLICKO2_SCALE = 173.7178  # Glicko-2's mu = (r - 1500) / 173.7178, phi = RD / 173.7178
CONVERGENCE = 0.000001  # step 5.4's tolerance (Glickman's epsilon)
MAX_ITERATIONS = 1000


@dataclass(frozen=True, slots=True)
class Policy:
    """The constants of a rating system: lichess's by default (`LICHESS`)."""

    rating: float = 1500.0  # a new player's rating
    rd: float = 500.0  # a new player's rating deviation, and the most it grows to
    vol: float = 0.09  # a new player's volatility
    tau: float = 0.75  # how much the volatility may change
    rd_floor: float = 45.0
    vol_max: float = 0.1
    min_rating: float = 400.0
    max_change: float = 700.0  # points one game may move a rating
    provisional_rd: float = 110.0  # provisional while RD >= this
    periods_per_day: float = 0.21436  # rating periods a day of idleness adds to the RD
    beta: float = 250.0  # Plackett-Luce: the performance spread (OpenSkill's sigma / 2 on this scale)
    kappa: float = 0.0001  # Plackett-Luce: the smallest factor a sigma is multiplied by


LICHESS = Policy()


@dataclass(frozen=True, slots=True)
class Rating:
    """A rating as people read it: rating, RD and (Glicko-2) volatility, on the 1500 scale.

    For the multiplayer model `rating` is mu and `rd` is sigma, on the same scale (new: 1500 / 500).
    """

    rating: float
    rd: float
    vol: float

    def provisional(self, policy: Policy = LICHESS) -> bool:
        """True while the rating is not yet trusted (shown with "?")."""
        return self.rd >= policy.provisional_rd


def new_rating(policy: Policy = LICHESS) -> Rating:
    """A player's rating before their first rated game."""
    return Rating(policy.rating, policy.rd, policy.vol)


# -- Glicko-2 ---------------------------------------------------------------------------------------------------
def _g(phi: float) -> float:
    """Step 3's g(phi): how much an opponent's uncertainty damps the result."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    """Step 3's E: the expected score against opponent j."""
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def glicko2(
    player: Rating, results: Sequence[tuple[Rating, float]], tau: float, elapsed_periods: float = 1.0
) -> Rating:
    """One rating period of Glicko-2 for `player` with `results` [(opponent, score 0 / 0.5 / 1)], no limits.

    A period without results only grows the RD (step 6 alone). `elapsed_periods` scales step 6's growth
    (1 in Glickman's paper and for a lichess game).
    """
    mu = (player.rating - 1500.0) / GLICKO2_SCALE
    phi = player.rd / GLICKO2_SCALE
    sigma = player.vol
    if not results:
        grown = math.sqrt(phi * phi + elapsed_periods * sigma * sigma)
        return Rating(player.rating, grown * GLICKO2_SCALE, sigma)
    opponents = [((o.rating - 1500.0) / GLICKO2_SCALE, o.rd / GLICKO2_SCALE, score) for o, score in results]
    # Steps 3 and 4: the estimated variance v and improvement delta.
    v_inverse = 0.0
    outcome = 0.0
    for mu_j, phi_j, score in opponents:
        e = _expected(mu, mu_j, phi_j)
        g = _g(phi_j)
        v_inverse += g * g * e * (1.0 - e)
        outcome += g * (score - e)
    v = 1.0 / v_inverse
    delta = v * outcome
    # Step 5: the new volatility, by the Illinois algorithm on f(x).
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    for _ in range(MAX_ITERATIONS):
        if abs(big_b - big_a) <= CONVERGENCE:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    new_sigma = math.exp(big_a / 2.0)
    # Steps 6 and 7: the pre-period deviation, then the new deviation and rating.
    phi_star = math.sqrt(phi * phi + elapsed_periods * new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * outcome
    # Step 8: back to the Glicko scale.
    return Rating(new_mu * GLICKO2_SCALE + 1500.0, new_phi * GLICKO2_SCALE, new_sigma)


def idle(rating: Rating, days: float, policy: Policy = LICHESS) -> Rating:
    """The rating after `days` without a rated game: its RD grows as lichess's does (capped at `policy.rd`)."""
    if days <= 0:
        return rating
    grown = glicko2(rating, [], policy.tau, days * policy.periods_per_day)
    return replace(grown, rd=min(grown.rd, policy.rd))


def bounded(before: Rating, after: Rating, policy: Policy = LICHESS, weight: float = 1.0) -> Rating:
    """`after` within lichess's limits: the change scaled by `weight` (0.5 for a bot's game against a person)
    and at most `max_change`, the rating at least `min_rating`, the RD in rd_floor..rd, the volatility capped."""
    change = (after.rating - before.rating) * weight
    change = max(-policy.max_change, min(policy.max_change, change))
    return Rating(
        max(policy.min_rating, before.rating + change),
        max(policy.rd_floor, min(policy.rd, after.rd)),
        min(policy.vol_max, after.vol),
    )


def rate_pair(
    first: Rating,
    second: Rating,
    score: float,
    policy: Policy = LICHESS,
    weight: float = 1.0,
) -> tuple[Rating, Rating]:
    """One game between two players, as lichess rates it: `score` is the first player's (1, 0.5 or 0).

    Each player's rating is one Glicko-2 period with this single result against the other's rating as it was
    before the game; both outcomes go through `bounded` (with `weight`). Idle growth (`idle`) is applied by the
    caller before, since it depends on when each last played.
    """
    one = glicko2(first, [(second, score)], policy.tau)
    two = glicko2(second, [(first, 1.0 - score)], policy.tau)
    return bounded(first, one, policy, weight), bounded(second, two, policy, weight)


# -- Plackett-Luce (Weng-Lin) ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Skill:
    """A Weng-Lin skill estimate: mean and standard deviation."""

    mu: float
    sigma: float


def plackett_luce(
    teams: Sequence[Sequence[Skill]], ranks: Sequence[int], beta: float, kappa: float = 0.0001
) -> list[list[Skill]]:
    """The skills after one game: `teams` in any order, `ranks[i]` team i's place (lower is better, equal ties).

    Weng-Lin Algorithm 1 with the Plackett-Luce model: for team i,
    Omega_i = sigma_i^2 / c * sum over q ranked at or above i of (1[q = i] - exp(mu_i/c) / S_q) / A_q,
    Delta_i = gamma_i * sigma_i^2 / c^2 * sum over the same q of p_iq (1 - p_iq) / A_q, p_iq = exp(mu_i/c) / S_q,
    where S_q sums exp(mu_s/c) over the teams s ranked at or below q and A_q counts the teams tied with q;
    each player moves by their share sigma^2 / sigma_i^2 of the team's change.
    """
    if len(teams) != len(ranks):
        raise ValueError("one rank per team")
    if len(teams) < 2:
        return [list(team) for team in teams]
    team_mu = [sum(p.mu for p in team) for team in teams]
    team_var = [sum(p.sigma * p.sigma for p in team) for team in teams]
    c = math.sqrt(sum(var + beta * beta for var in team_var))
    strength = [math.exp(mu / c) for mu in team_mu]
    tied = [sum(1 for r in ranks if r == rank) for rank in ranks]
    below = [sum(s for s, r in zip(strength, ranks, strict=True) if r >= rank) for rank in ranks]
    result = []
    for i, team in enumerate(teams):
        omega, delta = _omega_delta(i, ranks, strength, below, tied)
        gamma = math.sqrt(team_var[i]) / c
        big_omega = team_var[i] / c * omega
        big_delta = gamma * team_var[i] / (c * c) * delta
        result.append(
            [
                Skill(
                    p.mu + p.sigma * p.sigma / team_var[i] * big_omega,
                    p.sigma * math.sqrt(max(1.0 - p.sigma * p.sigma / team_var[i] * big_delta, kappa)),
                )
                for p in team
            ]
        )
    return result


def _omega_delta(
    i: int, ranks: Sequence[int], strength: list[float], below: list[float], tied: list[int]
) -> tuple[float, float]:
    """Team i's two sums over the teams q ranked at or above it (`plackett_luce`'s omega and delta, before scaling)."""
    omega = 0.0
    delta = 0.0
    for q in range(len(ranks)):
        if ranks[q] > ranks[i]:
            continue
        p = strength[i] / below[q]
        omega += ((1.0 if q == i else 0.0) - p) / tied[q]
        delta += p * (1.0 - p) / tied[q]
    return omega, delta


def rate_ranked(
    players: Sequence[Rating], places: Sequence[int], policy: Policy = LICHESS, weight: float = 1.0
) -> list[Rating]:
    """A free-for-all (Tron with 3-4 riders): each player a one-rider team, `places` lower is better.

    mu and sigma are the rating and RD on the 1500 scale (beta = `policy.beta`); the outcome goes through
    `bounded` like a Glicko-2 game (the volatility is carried unchanged).
    """
    skills = plackett_luce([[Skill(p.rating, p.rd)] for p in players], places, policy.beta, policy.kappa)
    return [
        bounded(p, Rating(team[0].mu, team[0].sigma, p.vol), policy, weight)
        for p, team in zip(players, skills, strict=True)
    ]
