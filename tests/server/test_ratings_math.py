"""The rating arithmetic (server/ratings.py) against published reference values."""

from __future__ import annotations

import pytest

from gamenight.server.ratings import (
    LICHESS,
    Rating,
    Skill,
    bounded,
    glicko2,
    idle,
    new_rating,
    plackett_luce,
    rate_pair,
    rate_ranked,
)


def test_glickman_worked_example() -> None:
    """Glicko-2 gives Glickman's published example: 1500/200/0.06 vs 1400/30, 1550/100, 1700/300 (1, 0, 0)."""
    player = Rating(1500, 200, 0.06)
    results = [(Rating(1400, 30, 0.06), 1.0), (Rating(1550, 100, 0.06), 0.0), (Rating(1700, 300, 0.06), 0.0)]
    after = glicko2(player, results, tau=0.5)
    # The paper rounds mu' to four places (-0.2069) before converting: 1500 + 173.7178 * -0.2069 = 1464.06; the
    # unrounded value is 1464.0507, within that rounding of the published figure.
    mu = (after.rating - 1500) / 173.7178
    assert round(mu, 4) == -0.2069
    assert round(1500 + 173.7178 * round(mu, 4), 2) == 1464.06
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert round(after.rd, 2) == 151.52
    assert after.vol == pytest.approx(0.05999, abs=0.00001)  # 0.059996, printed as 0.05999 in the paper


def test_new_player_is_lichess_default() -> None:
    """A newcomer starts at 1500 / RD 500 / volatility 0.09 and is provisional."""
    rating = new_rating()
    assert (rating.rating, rating.rd, rating.vol) == (1500, 500, 0.09)
    assert rating.provisional()
    assert not Rating(1500, 109.9, 0.06).provisional()


def test_pair_is_symmetric_and_zero_sum_between_equals() -> None:
    """Two equal newcomers: the winner gains what the loser loses, a draw changes no rating."""
    a, b = new_rating(), new_rating()
    win, loss = rate_pair(a, b, 1.0)
    assert win.rating > 1500 > loss.rating
    assert win.rating - 1500 == pytest.approx(1500 - loss.rating)
    assert win.rd < 500 and win.rd == pytest.approx(loss.rd)
    drawn, other = rate_pair(a, b, 0.5)
    assert drawn.rating == pytest.approx(1500) and other.rating == pytest.approx(1500)


def test_bot_weight_halves_the_change() -> None:
    """A bot's game against a person moves ratings by half the full change."""
    a, b = Rating(1600, 80, 0.06), Rating(1500, 80, 0.06)
    full, _ = rate_pair(a, b, 0.0)
    half, _ = rate_pair(a, b, 0.0, weight=0.5)
    assert half.rating - 1600 == pytest.approx((full.rating - 1600) / 2)


def test_limits_hold() -> None:
    """The RD never drops below 45, the volatility stays at most 0.1, a game moves at most 700 points."""
    settled = Rating(1500, 46, 0.06)
    for _ in range(50):
        settled, _ = rate_pair(settled, Rating(1500, 46, 0.06), 0.5)
    assert settled.rd >= LICHESS.rd_floor
    wild = bounded(Rating(1500, 500, 0.09), Rating(3000, 20, 0.5))
    assert wild.rating == 2200 and wild.rd == 45 and wild.vol == 0.1
    assert bounded(Rating(450, 100, 0.06), Rating(100, 100, 0.06)).rating == 400


def test_idle_rd_grows_like_lichess() -> None:
    """A year away takes a typical RD from 60 to about 110 (lila's ratingPeriodsPerDay), capped at 500."""
    year = idle(Rating(1800, 60, 0.06), 365)
    assert 105 < year.rd < 115
    assert year.rating == 1800
    assert idle(Rating(1500, 490, 0.09), 10_000).rd == 500
    assert idle(Rating(1500, 60, 0.06), 0).rd == 60


ONE = Skill(25.0, 25.0 / 3.0)
BETA = 25.0 / 6.0


def _check(got: list[list[Skill]], want: list[list[tuple[float, float]]]) -> None:
    assert [[(s.mu, s.sigma) for s in team] for team in got] == [
        [(pytest.approx(mu, abs=1e-9), pytest.approx(sigma, abs=1e-9)) for mu, sigma in team] for team in want
    ]


def test_plackett_luce_matches_openskill_fixtures() -> None:
    """Plackett-Luce gives openskill.js's test values (src/models/__tests__/plackett-luce.test.ts) for 2-4 riders."""
    _check(
        plackett_luce([[ONE], [ONE]], [1, 2], BETA),
        [[(27.63523138347365, 8.065506316323548)], [(22.36476861652635, 8.065506316323548)]],
    )
    _check(
        plackett_luce([[ONE], [ONE], [ONE]], [1, 2, 3], BETA),
        [
            [(27.868876552746237, 8.204837030780652)],
            [(25.717219138186557, 8.057829747583874)],
            [(21.413904309067206, 8.057829747583874)],
        ],
    )
    _check(
        plackett_luce([[ONE], [ONE], [ONE], [ONE]], [1, 2, 3, 4], BETA),
        [
            [(27.795084971874736, 8.263160757613477)],
            [(26.552824984374855, 8.179213704945203)],
            [(24.68943500312503, 8.083731307186588)],
            [(20.96265504062538, 8.083731307186588)],
        ],
    )


def test_plackett_luce_teams_of_different_sizes() -> None:
    """The team form matches openskill.js's "3 teams different sized players" fixture."""
    _check(
        plackett_luce([[ONE, ONE, ONE], [ONE], [ONE, ONE]], [1, 2, 3], BETA),
        [
            [(25.939870821784513, 8.247641552260456)] * 3,
            [(27.21366020491262, 8.274321317985242)],
            [(21.84646897330287, 8.213058173195341)] * 2,
        ],
    )


def test_plackett_luce_ties_and_order() -> None:
    """Riders sharing a place move alike; the order of the list does not matter, only the places."""
    tied = plackett_luce([[ONE], [ONE], [ONE]], [1, 2, 2], BETA)
    assert tied[1][0] == tied[2][0]
    shuffled = plackett_luce([[ONE], [ONE], [ONE]], [3, 1, 2], BETA)
    straight = plackett_luce([[ONE], [ONE], [ONE]], [1, 2, 3], BETA)
    assert shuffled[1][0] == straight[0][0] and shuffled[0][0] == straight[2][0]


def test_rate_ranked_on_the_1500_scale() -> None:
    """Three newcomers at 1500/500 move as the 25/8.33 fixture scaled by 60 (beta 250), within the limits."""
    after = rate_ranked([new_rating()] * 3, [1, 2, 3])
    assert after[0].rating == pytest.approx(1500 + (27.868876552746237 - 25) * 60)
    assert after[2].rd == pytest.approx(8.057829747583874 * 60)
    assert after[0].rating > after[1].rating > after[2].rating
