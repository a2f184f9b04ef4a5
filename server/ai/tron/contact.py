"""Tron AI: level 5's search in contact in Python, the compiled kernel's `contact_search` line for line.

The kernel (server/ai/_tronkernel.c, "level 5's contact search") is level 5's reference; this is the same search for
when it is absent (no C compiler, `GAMENIGHT_PURE_AI=1`) or declines a board (wider than 61 squares): the same
negamax with principal-variation re-searches and late move reductions (`params.LEVEL5_REDUCTION`), the same move
order (hash move, two killers a ply, then N, E, S, W), the same Zobrist keys and table of 2**20 slots kept from call
to call (entries of earlier calls only order moves), the same iterative deepening over depths 1, 2, 4, 6, ... and
the same ranking of the root moves tied at the draw value (`params.LEVEL5_TIE_SHARE`). Its leaves are
`territory_score` with chambers, which equals the kernel's leaf. Given a position neither has searched before, the
two search the same nodes and answer the same move, score, depth and main line (tests/ai/test_tron_contact_search.py).
"""

from __future__ import annotations

import time

from gamenight.server.ai.search import INFINITY, PROVEN, WIN
from gamenight.server.ai.tron import params
from gamenight.server.ai.tron.grid import Direction, Index, Mask, steps_of
from gamenight.server.ai.tron.territory import territory_score

MAX_PLY = 124
"""The deepest ply the search goes to (the kernel's `MAX_PLY`)."""
TABLE_BITS = 20
"""The table's slots are the key's low 20 bits, as the kernel's."""
TABLE_KEEP = 100_000
"""Entries past which a new call starts with an empty table (about 15 MB; the kernel's is a fixed 16 MB array, this
one a dict of the slots used): earlier calls' entries only order moves, and a move searches a few thousand nodes."""
CHECK_MASK = 63
"""The clock is read when the node count is a multiple of 64."""
EXACT_BOUND, LOWER_BOUND, UPPER_BOUND = 0, 1, 2
MAX_CELLS = 64 * 128
"""Squares of the kernel's largest board; its Zobrist numbers cover these, and this module's continue the sequence."""
_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _splitmix(n: int) -> int:
    """The kernel's splitmix64 output number `n` (from 1) of the sequence seeded with the golden ratio."""
    z = (_GOLDEN + n * _GOLDEN) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


_ZOBRIST: list[list[int]] = []
"""Zobrist numbers [kind][square]: an open square, our head, their head, our committed target (made at first use)."""


def _zobrist(cells: int) -> list[list[int]]:
    """The Zobrist numbers of at least `cells` squares: the kernel's for the first `MAX_CELLS`, then more."""
    if not _ZOBRIST:
        _ZOBRIST.extend([_splitmix(t * MAX_CELLS + i + 1) for i in range(MAX_CELLS)] for t in range(4))
    for t, numbers in enumerate(_ZOBRIST):
        while len(numbers) < cells:  # beyond the kernel's boards: further along the sequence, clear of its own
            numbers.append(_splitmix(4 * MAX_CELLS + t * (1 << 32) + len(numbers) + 1))
    return _ZOBRIST


_TABLE: dict[int, list[int]] = {}
"""The table by slot: [key, node-relative score, call, depth, best move | bound << 4], kept from call to call."""
_CALL = [0]
"""The number of the call in progress (16 bits, as the kernel's): entries of other calls only order moves."""


def _next_call() -> None:
    """A new table generation (the killers are the search's own)."""
    _CALL[0] = (_CALL[0] + 1) & 0xFFFF
    if not _CALL[0] or len(_TABLE) > TABLE_KEEP:
        _TABLE.clear()
        _CALL[0] = _CALL[0] or 1


def _to_table(score: int, ply: int) -> int:
    """A proven score made relative to the node."""
    return score + ply if score >= PROVEN else score - ply if score <= -PROVEN else score


def _from_table(score: int, ply: int) -> int:
    """A node-relative proven score seen from the root."""
    return score - ply if score >= PROVEN else score + ply if score <= -PROVEN else score


class _Aborted(Exception):
    """The deadline passed: the iteration in progress is dropped (the board is restored on the way out)."""


class _Search:
    """One call's state: the board (changed and restored as the search goes), weights, killers and counters."""

    def __init__(self, free: Mask, stride: int, draw: int, edge: int, chains: bool, deadline: float) -> None:
        """Ready to search the board `free` of this stride with these leaf weights until `deadline`."""
        self.free = free
        self.stride = stride
        self.steps = steps_of(stride)
        self.draw = draw
        self.edge = edge
        self.chains = chains
        self.deadline = deadline
        self.reduction = 0
        self.nodes = 0
        self.stoppable = False
        self.horizon = False
        self.killers = [[0, 0] for _ in range(MAX_PLY + 2)]
        self.z = _zobrist(max(MAX_CELLS, free.bit_length() + 2 * stride))

    def territory(self, free: Mask, first: Index, second: Index, ahead: bool, draw: int) -> int:
        """Level 5's leaf: the first head's chamber-counted territory against the second's."""
        return territory_score(self.stride, free, first, second, ahead, draw, True, self.edge, False, -1, self.chains)

    def evaluate(self, ours: Index, theirs: Index, pending: Index) -> int:
        """The static score for the side to move (our ply when `pending` is 0, else theirs)."""
        free = self.free
        if not pending:
            return self.territory(free, ours, theirs, False, -self.draw)
        if not free >> pending & 1:
            steps = self.steps
            return params.DOOMED if any(free >> (theirs + steps[d]) & 1 for d in (1, 2, 3, 4)) else self.draw
        return self.territory(free ^ 1 << pending, theirs, pending, True, self.draw)

    def ordered_moves(self, head: Index, hash_move: int, ply: int) -> list[int]:
        """The mover's directions onto open squares (NORTH alone for a doomed rider), hash move and killers first."""
        free, steps = self.free, self.steps
        open_ = [False, *(bool(free >> (head + steps[d]) & 1) for d in (1, 2, 3, 4))]
        if not any(open_):
            return [1]
        moves = []
        killers = self.killers[ply]
        for d in (hash_move, killers[0], killers[1]):
            if 1 <= d <= 4 and open_[d]:
                moves.append(d)
                open_[d] = False
        moves.extend(d for d in (1, 2, 3, 4) if open_[d])
        return moves

    def tick_key(self, key: int, ours: Index, theirs: Index, pending: Index, target: Index) -> int:
        """The key after a tick moving our head from `ours` to `pending` and theirs from `theirs` to `target`."""
        z = self.z
        return (
            key
            ^ z[3][pending]
            ^ z[0][pending]
            ^ z[0][target]
            ^ z[1][ours]
            ^ z[1][pending]
            ^ z[2][theirs]
            ^ z[2][target]
        )

    def child(
        self,
        ours: Index,
        theirs: Index,
        pending: Index,
        key: int,
        move: int,
        depth: int,
        alpha: int,
        beta: int,
        ply: int,
    ) -> int:
        """The score of child `move` from the node's side: our ply commits a target, theirs resolves the tick."""
        if not pending:
            target = ours + self.steps[move]
            return -self.negamax(ours, theirs, target, key ^ self.z[3][target], depth - 1, -beta, -alpha, ply + 1)
        target = theirs + self.steps[move]
        free = self.free
        same = pending == target
        we_crash = same or not free >> pending & 1
        they_crash = same or not free >> target & 1
        if we_crash or they_crash:
            self.nodes += 1
            over = -self.draw if we_crash and they_crash else -WIN if we_crash else WIN
            return -_from_table(over, ply + 1)
        following = self.tick_key(key, ours, theirs, pending, target)
        self.free = free ^ (1 << pending | 1 << target)
        try:
            return -self.negamax(pending, target, 0, following, depth - 1, -beta, -alpha, ply + 1)
        finally:
            self.free = free

    def negamax(
        self, ours: Index, theirs: Index, pending: Index, key: int, depth: int, alpha: int, beta: int, ply: int
    ) -> int:
        """The node's score searched `depth` plies within (alpha, beta), fail-soft, stored in the table."""
        self.nodes += 1
        if self.stoppable and not self.nodes & CHECK_MASK and time.perf_counter() >= self.deadline:
            raise _Aborted
        if depth <= 0 or ply >= MAX_PLY:
            self.horizon = True
            return self.evaluate(ours, theirs, pending)
        slot = key & ((1 << TABLE_BITS) - 1)
        entry = _TABLE.get(slot)
        hash_move = 0
        if entry is not None and entry[0] == key:
            hash_move = entry[4] & 15
            if entry[2] == _CALL[0] and entry[3] >= depth:
                score = _from_table(entry[1], ply)
                flag = entry[4] >> 4
                if (
                    flag == EXACT_BOUND
                    or (flag == LOWER_BOUND and score >= beta)
                    or (flag == UPPER_BOUND and score <= alpha)
                ):
                    if -PROVEN < score < PROVEN:
                        self.horizon = True
                    return score
        moves = self.ordered_moves(theirs if pending else ours, hash_move, ply)
        original_alpha, best, best_move = alpha, -INFINITY, moves[0]
        reduction = self.reduction
        for i, move in enumerate(moves):
            if i == 0:
                score = self.child(ours, theirs, pending, key, move, depth, alpha, beta, ply)
            else:
                # a later move is first tried `reduction` plies shallower; only one that beats alpha there is
                # searched again to the full depth
                reduced = reduction and depth >= reduction + 2
                shallower = depth - reduction if reduced else depth
                score = self.child(ours, theirs, pending, key, move, shallower, alpha, alpha + 1, ply)
                if reduced and score > alpha:
                    score = self.child(ours, theirs, pending, key, move, depth, alpha, alpha + 1, ply)
                if alpha < score < beta:
                    score = self.child(ours, theirs, pending, key, move, depth, alpha, beta, ply)
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        killers = self.killers[ply]
                        if killers[0] != move:
                            killers[1] = killers[0]
                            killers[0] = move
                        break
        flag = UPPER_BOUND if best <= original_alpha else LOWER_BOUND if best >= beta else EXACT_BOUND
        _TABLE[slot] = [key, _to_table(best, ply), _CALL[0], depth, best_move | flag << 4]
        return best

    def root(self, ours: Index, theirs: Index, key: int, moves: list[int], depth: int) -> list[int]:
        """Every root move's score at `depth` (the first with the full window, the rest null-window first)."""
        scores = []
        best = -INFINITY
        for i, move in enumerate(moves):
            floor = best
            if i == 0:
                score = self.child(ours, theirs, 0, key, move, depth, floor, INFINITY, 0)
            else:
                score = self.child(ours, theirs, 0, key, move, depth, floor, floor + 1, 0)
                if score > floor:
                    score = self.child(ours, theirs, 0, key, move, depth, floor, INFINITY, 0)
            scores.append(score)
            best = max(best, score)
        return scores

    def tied_moves(
        self, ours: Index, theirs: Index, key: int, moves: list[int], scores: list[int], depth: int, best: int
    ) -> list[int]:
        """The root moves that score exactly `best` at `depth` (each checked with a null window just under it)."""
        tied = []
        for i, move in enumerate(moves):
            if scores[i] < best:
                continue
            score = best if i == 0 else self.child(ours, theirs, 0, key, move, depth, best - 1, best, 0)
            if score >= best:
                tied.append(move)
        return tied

    def main_line(self, ours: Index, theirs: Index, key: int, first: int, depth: int) -> list[int]:
        """The root's best move, then this call's table moves while they are open and the game goes on."""
        free, steps, z = self.free, self.steps, self.z
        line: list[int] = []
        pending = 0
        move = first
        while len(line) < depth and len(line) < MAX_PLY:
            line.append(move)
            if not pending:
                pending = ours + steps[move]
                key ^= z[3][pending]
            else:
                target = theirs + steps[move]
                if pending == target or not free >> pending & 1 or not free >> target & 1:
                    break
                key = self.tick_key(key, ours, theirs, pending, target)
                free ^= 1 << pending | 1 << target
                ours, theirs, pending = pending, target, 0
            entry = _TABLE.get(key & ((1 << TABLE_BITS) - 1))
            if entry is None or entry[0] != key or entry[2] != _CALL[0] or not entry[4] & 15:
                break
            move = entry[4] & 15
            if not free >> ((theirs if pending else ours) + steps[move]) & 1:
                break
        return line


def _depths(max_depth: int) -> list[int]:
    """Depths 1, 2, 4, 6, ... up to `max_depth`."""
    return [1, *range(2, max_depth + 1, 2)]


def contact_search(
    free: Mask,
    stride: int,
    ours: Index,
    theirs: Index,
    draw_penalty: int,
    edge: int,
    chains: bool,
    deadline: float,
    max_depth: int,
    reduction: int = 0,
    pinned_deadline: float | None = None,
    tie_draw: int = 0,
) -> tuple[Direction, int, int, int, tuple[Direction, ...]]:
    """Level 5's search in contact, as the kernel's `contact_search` with the same arguments: (move, score, depth
    completed, nodes, main line). With `pinned_deadline`, a root pinned at the draw value stops deepening then and
    plays the best of its tied moves by a search with draws worth `-tie_draw`, until `deadline`."""
    if max_depth < 1:
        raise ValueError("max_depth must be at least 1")
    if not 0 <= reduction <= 8:
        raise ValueError("reduction must be 0 to 8 plies")
    max_depth = min(max_depth, MAX_PLY)
    search = _Search(free, stride, draw_penalty, edge, chains, deadline)
    search.reduction = reduction
    _next_call()
    z = search.z
    key = z[1][ours] ^ z[2][theirs]
    rest = free
    while rest:
        low = rest & -rest
        key ^= z[0][low.bit_length() - 1]
        rest ^= low
    entry = _TABLE.get(key & ((1 << TABLE_BITS) - 1))
    moves = search.ordered_moves(ours, entry[4] & 15 if entry is not None and entry[0] == key else 0, 0)
    scores: list[int] = []
    best, best_score, done = moves[0], 0, 0
    for depth in _depths(max_depth):
        search.stoppable = depth > 1
        search.horizon = False
        try:
            iteration = search.root(ours, theirs, key, moves, depth)
        except _Aborted:
            break
        done = depth
        top = max(range(len(moves)), key=lambda i: (iteration[i], -i))
        best, best_score = moves[top], iteration[top]
        # the next iteration's order: the best first, then by score (stable)
        rest_order = sorted((i for i in range(len(moves)) if i != top), key=lambda i: -iteration[i])
        moves = [moves[top], *(moves[i] for i in rest_order)]
        scores = [iteration[top], *(iteration[i] for i in rest_order)]
        if not search.horizon or abs(best_score) >= PROVEN:
            break
        # pinned at the draw value: stop at the pinned deadline, leaving the rest to break the tie
        breaks = pinned_deadline is not None and best_score == -draw_penalty
        search.deadline = pinned_deadline if breaks and pinned_deadline is not None else deadline
        if time.perf_counter() >= search.deadline:
            break
    line_depth = done
    if pinned_deadline is not None and best_score == -draw_penalty and len(moves) > 1 and done:
        # the opponent, seeing our move, can hold every move to a draw: rank the moves tied at the draw value by a
        # search where draws are worth -tie_draw to us instead, until the whole deadline
        search.deadline = deadline
        search.stoppable = True
        try:
            tied = search.tied_moves(ours, theirs, key, moves, scores, done, best_score)
        except _Aborted:
            tied = []
        if len(tied) > 1:
            search.draw = tie_draw
            _next_call()
            search.killers = [[0, 0] for _ in range(MAX_PLY + 2)]
            for depth in _depths(max_depth):
                search.stoppable = depth > 1
                search.horizon = False
                try:
                    tie_scores = search.root(ours, theirs, key, tied, depth)
                except _Aborted:
                    break
                top = max(range(len(tied)), key=lambda i: (tie_scores[i], -i))
                best = tied[top]
                line_depth = depth
                tied[0], tied[top] = tied[top], tied[0]  # the next iteration searches the best first
                if not search.horizon or time.perf_counter() >= deadline:
                    break
    line = search.main_line(ours, theirs, key, best, line_depth)
    return best, best_score, done, search.nodes, tuple(line)
