/* The Othello AI's optional compiled kernel (issue 38, session 1): 8x8 move generation, level 5's midgame search
 * and the exact endgame solver.
 *
 * othello_ai.py keeps a board as two Python ints, a bit per square, `sq = row * 8 + col` (a1 = bit 0, h8 = bit 63);
 * on 8x8 they fit one 64-bit word each. This module takes those ints and computes what the pure-Python code
 * computes (tests/ai/test_othello_kernel.py checks it):
 *
 *   legal_moves(own, opp) -> int                        server.games.othello.legal_mask on 8x8
 *   flips(own, opp, sq) -> int                          server.games.othello.flip_mask on 8x8 (0 if occupied)
 *   perft(own, opp, depth) -> int                       server.games.othello._perft (Bik's convention)
 *   evaluate(own, opp) -> int                           othello_ai.evaluate_sides with level 5's phase weights
 *   weights() -> ((mobility, ..., discs), ...)           the phase weights it uses, one row per empty count
 *   load_patterns(instances, block, weights)            the fitted pattern tables (othello_patterns.PatternTable)
 *   use_patterns(on) -> bool                            whether search's leaves use them (else the hand weights)
 *   pattern_evaluate(own, opp) -> int                   othello_patterns.evaluate with the loaded tables
 *   search(own, opp, max_depth, deadline)
 *       -> (move, score, depth, nodes, main line)        search.search over OthelloEngine(8), noise 0: the same
 *                                                        iterations, ordering, table and stopping rules, so the
 *                                                        same tree, node for node, to any fixed depth (with the
 *                                                        hand weights; with patterns on, only the leaves differ)
 *   solve(own, opp, alpha, beta, deadline, fresh, award)
 *       -> (move, difference, nodes) or None             othello_ai.EndgameSolver.best_move's value (None: the
 *                                                        deadline passed first)
 *
 * Moves are squares 0..63 and None for a pass. A deadline is a time.perf_counter() value (CLOCK_MONOTONIC on
 * Linux), < 0 for none. Plain C API, no dependency; the GIL is held throughout and nothing in a computation calls
 * back into Python, so the static tables are never used by two calls at once (the server runs its AI in worker
 * processes anyway).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;

#define NOT_A 0xFEFEFEFEFEFEFEFEULL /* every square but file a (col 0) */
#define NOT_H 0x7F7F7F7F7F7F7F7FULL /* every square but file h (col 7) */
#define INNER 0x7E7E7E7E7E7E7E7EULL /* files b-g: a sideways run may continue there without wrapping */
#define CORNERS 0x8100000000000081ULL

#define PASS 64    /* the move code of a pass */
#define NO_MOVE 255 /* no move (an empty hash-move or killer slot) */

/* search.py's and othello_ai.py's constants; the module exports them and othello_ai.py checks them. */
#define WIN 1000000
#define PROVEN (WIN - 1000)
#define INFINITY_SCORE (2 * WIN)
#define GAME_OVER_BASE (WIN - 600)
#define DISC_POINTS 4
#define MAX_DEPTH 64
#define TT_LIMIT 300000
#define NEXT_ITERATION_SHARE 0.5
#define SHALLOW_EMPTIES 6
#define LIMIT 101

static inline int popcount(u64 x) { return __builtin_popcountll(x); }
static inline int lowest_square(u64 x) { return __builtin_ctzll(x); }

static double monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* ---- rules ------------------------------------------------------------------------------------------------- */

/* The empty squares where P may play against O: runs of O grown from P's discs in each direction (dumb7fill). */
static u64 legal(u64 P, u64 O) {
    u64 inner = O & INNER, moves = 0, t;
#define GROW(mask, OP, SH)                                                                                         \
    t = (mask) & (P OP SH);                                                                                        \
    t |= (mask) & (t OP SH);                                                                                       \
    t |= (mask) & (t OP SH);                                                                                       \
    t |= (mask) & (t OP SH);                                                                                       \
    t |= (mask) & (t OP SH);                                                                                       \
    t |= (mask) & (t OP SH);                                                                                       \
    moves |= t OP SH;
    GROW(inner, <<, 1)
    GROW(inner, >>, 1)
    GROW(O, <<, 8)
    GROW(O, >>, 8)
    GROW(inner, <<, 9)
    GROW(inner, >>, 9)
    GROW(inner, <<, 7)
    GROW(inner, >>, 7)
#undef GROW
    return moves & ~(P | O);
}

/* RAYS[sq][d]: the squares from sq (excluded) to the edge in direction d; d < 4 run to higher squares. */
static u64 RAYS[64][8];

static void build_rays(void) {
    static const int steps[8][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}, {0, -1}, {-1, 0}, {-1, -1}, {-1, 1}};
    for (int sq = 0; sq < 64; sq++) {
        for (int d = 0; d < 8; d++) {
            u64 ray = 0;
            int row = sq / 8 + steps[d][0], col = sq % 8 + steps[d][1];
            while (row >= 0 && row < 8 && col >= 0 && col < 8) {
                ray |= 1ULL << (row * 8 + col);
                row += steps[d][0];
                col += steps[d][1];
            }
            RAYS[sq][d] = ray;
        }
    }
}

/* The O discs P flips by playing on the empty square sq (0: not a legal move): along each ray, the run of O
 * discs flips if the first square that is not O's holds a P disc. */
static u64 flips_of(u64 P, u64 O, int sq) {
    u64 flips = 0;
    const u64 *rays = RAYS[sq];
    for (int d = 0; d < 4; d++) {
        u64 stop = rays[d] & ~O;
        stop &= (u64)0 - stop;
        if (stop & P) flips |= rays[d] & (stop - 1);
    }
    for (int d = 4; d < 8; d++) {
        u64 stop = rays[d] & ~O;
        if (!stop) continue;
        stop = 1ULL << (63 - __builtin_clzll(stop));
        if (stop & P) flips |= rays[d] & ((u64)0 - (stop << 1));
    }
    return flips;
}

/* Leaves `depth` plies below, by Bik's convention: a pass uses a ply, a finished game is one leaf. */
static unsigned long long perft(u64 P, u64 O, int depth, int passed) {
    if (depth == 0) return 1;
    u64 moves = legal(P, O);
    if (!moves) return passed ? 1 : perft(O, P, depth - 1, 1);
    if (depth == 1) return (unsigned long long)popcount(moves);
    unsigned long long total = 0;
    while (moves) {
        int sq = lowest_square(moves);
        moves &= moves - 1;
        u64 f = flips_of(P, O, sq);
        total += perft(O ^ f, P | f | 1ULL << sq, depth - 1, 0);
    }
    return total;
}

/* ---- evaluation: othello_ai.evaluate_sides on 8x8 ------------------------------------------------------------- */

enum { W_MOBILITY, W_FRONTIER, W_CORNER, W_X, W_C, W_STABLE, W_EDGE, W_RING, W_PARITY, W_DISCS, N_WEIGHTS };

/* othello_ai.OPENING and ENDING, in the fields' order. */
static const int OPENING[N_WEIGHTS] = {60, 25, 700, -300, -100, 50, 10, -10, 0, -3};
static const int ENDING[N_WEIGHTS] = {40, 10, 450, -80, -30, 70, 15, -5, 80, 15};

static int WEIGHTS[65][N_WEIGHTS]; /* othello_ai.phase_weights(8), by the number of empty squares */

/* The geometry of othello_ai.geometry(8). */
static u64 ZONE_CORNER[4], ZONE_X[4], ZONE_C[4];
static u64 CORNER_RAY[4][2][7];
static u64 EDGES[4];
static u64 EDGE_SQUARES, SECOND_RING;
static uint8_t PRIORITY_ORDER[64]; /* every square in OthelloEngine.moves' order: corners, edges, ... X squares */

static u64 cell(int row, int col) { return 1ULL << (row * 8 + col); }

static void build_evaluation(void) {
    /* _blend: the same double arithmetic and round-half-even as Python's round(). */
    for (int empties = 0; empties <= 64; empties++) {
        double share = 1.0 - (double)(empties < 60 ? empties : 60) / 60.0;
        for (int f = 0; f < N_WEIGHTS; f++)
            WEIGHTS[empties][f] = (int)nearbyint((double)OPENING[f] + (double)(ENDING[f] - OPENING[f]) * share);
    }
    static const int corner_cells[4][2] = {{0, 0}, {0, 7}, {7, 0}, {7, 7}};
    u64 near_corner = 0, x_squares = 0, c_squares = 0;
    for (int z = 0; z < 4; z++) {
        int row = corner_cells[z][0], col = corner_cells[z][1];
        int d_row = row == 0 ? 1 : -1, d_col = col == 0 ? 1 : -1;
        ZONE_CORNER[z] = cell(row, col);
        ZONE_X[z] = cell(row + d_row, col + d_col);
        ZONE_C[z] = cell(row + d_row, col) | cell(row, col + d_col);
        near_corner |= ZONE_CORNER[z] | ZONE_X[z] | ZONE_C[z];
        x_squares |= ZONE_X[z];
        c_squares |= ZONE_C[z];
        for (int k = 1; k < 8; k++) {
            CORNER_RAY[z][0][k - 1] = cell(row, col + k * d_col);
            CORNER_RAY[z][1][k - 1] = cell(row + k * d_row, col);
        }
    }
    EDGES[0] = 0xFFULL;
    EDGES[1] = 0xFFULL << 56;
    EDGES[2] = ~NOT_A;
    EDGES[3] = ~NOT_H;
    u64 ring0 = 0, ring1 = 0, centre = 0;
    for (int row = 0; row < 8; row++) {
        for (int col = 0; col < 8; col++) {
            int ring = row;
            if (col < ring) ring = col;
            if (7 - row < ring) ring = 7 - row;
            if (7 - col < ring) ring = 7 - col;
            if (ring == 0) ring0 |= cell(row, col);
            else if (ring == 1) ring1 |= cell(row, col);
            else centre |= cell(row, col);
        }
    }
    EDGE_SQUARES = ring0 & ~near_corner;
    SECOND_RING = ring1 & ~near_corner;
    u64 groups[6] = {CORNERS, EDGE_SQUARES, centre, SECOND_RING, c_squares, x_squares};
    int n = 0;
    for (int g = 0; g < 6; g++)
        for (u64 part = groups[g]; part; part &= part - 1) PRIORITY_ORDER[n++] = (uint8_t)lowest_square(part);
}

/* The squares next to (in any of 8 directions) some square of `board`. */
static u64 neighbours(u64 board) {
    u64 east = board & NOT_H, west = board & NOT_A;
    return east << 1 | west >> 1 | board << 8 | board >> 8 | east << 9 | east >> 7 | west << 7 | west >> 9;
}

/* othello_ai.stable_edge_discs: runs of P's discs from its corners along the edges, and P's discs on full edges. */
static u64 stable_edge_discs(u64 P, u64 O) {
    u64 stable = 0;
    for (int z = 0; z < 4; z++) {
        if (!(P & ZONE_CORNER[z])) continue;
        stable |= ZONE_CORNER[z];
        for (int r = 0; r < 2; r++) {
            for (int k = 0; k < 7; k++) {
                u64 square = CORNER_RAY[z][r][k];
                if (!(P & square)) break;
                stable |= square;
            }
        }
    }
    u64 taken = P | O;
    for (int e = 0; e < 4; e++)
        if ((taken & EDGES[e]) == EDGES[e]) stable |= P & EDGES[e];
    return stable;
}

/* evaluate, given the other side's legal squares O_moves and the squares next to an empty one, rim. */
static int evaluate_with(u64 P, u64 O, u64 P_moves, u64 O_moves, u64 rim) {
    u64 empty = ~(P | O);
    int empties = popcount(empty);
    const int *w = WEIGHTS[empties];
    int score = w[W_MOBILITY] * (popcount(P_moves) - popcount(O_moves));
    score += w[W_FRONTIER] * (popcount(O & rim) - popcount(P & rim));
    score += w[W_CORNER] * (popcount(P & CORNERS) - popcount(O & CORNERS));
    for (int z = 0; z < 4; z++) {
        if (empty & ZONE_CORNER[z]) {
            score += w[W_X] * (popcount(P & ZONE_X[z]) - popcount(O & ZONE_X[z]));
            score += w[W_C] * (popcount(P & ZONE_C[z]) - popcount(O & ZONE_C[z]));
        }
    }
    if ((P | O) & CORNERS)
        score += w[W_STABLE] * (popcount(stable_edge_discs(P, O)) - popcount(stable_edge_discs(O, P)));
    score += w[W_EDGE] * (popcount(P & EDGE_SQUARES) - popcount(O & EDGE_SQUARES));
    score += w[W_RING] * (popcount(P & SECOND_RING) - popcount(O & SECOND_RING));
    score += w[W_DISCS] * (popcount(P) - popcount(O));
    if (w[W_PARITY]) score += (empties & 1) ? w[W_PARITY] : -w[W_PARITY];
    return score;
}

/* othello_ai.evaluate_sides on 8x8: the static score for P to move, whose legal squares are P_moves. */
static int evaluate(u64 P, u64 O, u64 P_moves) { return evaluate_with(P, O, P_moves, legal(O, P), neighbours(~(P | O))); }

/* ---- the pattern evaluation (issue 38, session 2): othello_patterns.evaluate --------------------------------- */

#define PATTERN_PHASES 6        /* othello_patterns.PHASES */
#define PATTERN_SCALE 64        /* othello_patterns.SCALE: table units per disc */
#define PATTERN_POINTS 16       /* othello_patterns.POINTS_PER_DISC */
#define MAX_PATTERN_SQUARES 10  /* the longest instance */
#define MAX_INSTANCES 256
#define PATTERN_EXTRAS 5 /* othello_patterns.EXTRAS: mobility, frontier, parity, constant, hand */
#define PATTERN_HAND_UNIT 100 /* othello_patterns.HAND_UNIT: the hand evaluation's feature is points / 100 */

/* The loaded tables (load_patterns): each instance's squares, most significant digit first, and its table's offset
 * in a phase block; PATTERN_PHASES blocks of `block` weights (the tables, then the PATTERN_EXTRAS' weights). */
static struct {
    int count, block, on;
    int length[MAX_INSTANCES], offset[MAX_INSTANCES];
    uint8_t squares[MAX_INSTANCES][MAX_PATTERN_SQUARES];
    int16_t *weights;
} PAT;

/* othello_patterns.phase_of */
static int pattern_phase(int empties) {
    int phase = (60 - empties) / 10;
    if (phase < 0) phase = 0;
    return phase > PATTERN_PHASES - 1 ? PATTERN_PHASES - 1 : phase;
}

/* Floor division by a positive divisor (C's / rounds towards zero; Python's // floors). */
static int floor_div(long a, long b) { return (int)(a >= 0 ? a / b : -((-a + b - 1) / b)); }

/* othello_patterns.evaluate: the fitted tables' score for P to move (P_moves its legal squares), in points. */
static int pattern_evaluate(u64 P, u64 O, u64 P_moves) {
    uint8_t digit[64];
    for (int sq = 0; sq < 64; sq++) digit[sq] = (uint8_t)((P >> sq & 1) | (O >> sq & 1) << 1);
    const int16_t *w = PAT.weights + (long)pattern_phase(popcount(~(P | O))) * PAT.block;
    long total = 0;
    for (int i = 0; i < PAT.count; i++) {
        const uint8_t *sq = PAT.squares[i];
        int index = 0;
        for (int k = 0; k < PAT.length[i]; k++) index = index * 3 + digit[sq[k]];
        total += w[PAT.offset[i] + index];
    }
    const int16_t *extra = w + PAT.block - PATTERN_EXTRAS;
    u64 empty = ~(P | O), rim = neighbours(empty), O_moves = legal(O, P);
    total += (long)extra[0] * (popcount(P_moves) - popcount(O_moves));
    total += (long)extra[1] * (popcount(O & rim) - popcount(P & rim));
    total += (popcount(empty) & 1) ? extra[2] : -extra[2];
    total += extra[3];
    total = total * PATTERN_HAND_UNIT + (long)extra[4] * evaluate_with(P, O, P_moves, O_moves, rim);
    return floor_div(total * PATTERN_POINTS, PATTERN_SCALE * PATTERN_HAND_UNIT);
}

/* The search's static score: the pattern tables when loaded and on, else level 5's hand weights. */
static int static_score(u64 P, u64 O, u64 P_moves) {
    return PAT.on ? pattern_evaluate(P, O, P_moves) : evaluate(P, O, P_moves);
}

/* othello_ai.game_over_score: a finished game for P, above every heuristic, ranked by the margin. */
static int game_over_score(u64 P, u64 O) {
    int diff = popcount(P) - popcount(O);
    if (diff > 0) return GAME_OVER_BASE + DISC_POINTS * diff;
    if (diff < 0) return -GAME_OVER_BASE + DISC_POINTS * diff;
    return 0;
}

/* ---- level 5's midgame search: search.py's core over OthelloEngine(8) ---------------------------------------- */

enum { EXACT, LOWER, UPPER };

/* A transposition table entry; gen tells the current search's entries from stale ones (0: never used). */
typedef struct {
    u64 P, O;
    int32_t score;
    int8_t depth;
    uint8_t flag, move;
    uint16_t gen;
} MidEntry;

#define MID_BITS 19 /* 524,288 slots for search.py's 300,000 entries: linear probing stays short */
#define MID_SLOTS (1u << MID_BITS)
#define MAX_PLY 128
#define MID_CHECK_MASK 1023 /* nodes between two looks at the clock, minus one */

static struct {
    MidEntry *table;
    uint16_t gen;
    long count; /* entries of the current search (search.py's len(tt)) */
    long long nodes;
    double deadline;
    int stoppable, aborted, horizon;
    uint8_t killers[MAX_PLY][2];
    long history[PASS + 1];
} M;

static inline u64 hash_pair(u64 P, u64 O) {
    u64 h = P * 0x9E3779B97F4A7C15ULL ^ (O * 0xC2B2AE3D27D4EB4FULL);
    return h ^ (h >> 29);
}

/* The slot holding (P, O) in the current search, or the empty slot where it would go. */
static MidEntry *mid_slot(u64 P, u64 O) {
    unsigned i = (unsigned)(hash_pair(P, O) >> (64 - MID_BITS));
    for (;;) {
        MidEntry *e = &M.table[i];
        if (e->gen != M.gen || (e->P == P && e->O == O)) return e;
        i = (i + 1) & (MID_SLOTS - 1);
    }
}

/* search.py's _to_tt and _from_tt: proven scores relative to the node, or seen from the root. */
static int to_tt(int score, int ply) { return score >= PROVEN ? score + ply : score <= -PROVEN ? score - ply : score; }
static int from_tt(int score, int ply) { return score >= PROVEN ? score - ply : score <= -PROVEN ? score + ply : score; }

/* _Tree.store: a full table (TT_LIMIT entries) only overwrites keys it already holds. */
static void mid_store(u64 P, u64 O, int depth, int flag, int score, int move, int ply) {
    MidEntry *e = mid_slot(P, O);
    if (e->gen != M.gen) {
        if (M.count >= TT_LIMIT) return;
        M.count++;
        e->gen = M.gen;
        e->P = P;
        e->O = O;
    }
    e->depth = (int8_t)depth;
    e->flag = (uint8_t)flag;
    e->score = to_tt(score, ply);
    e->move = (uint8_t)move;
}

static const MidEntry *mid_probe(u64 P, u64 O) {
    MidEntry *e = mid_slot(P, O);
    return e->gen == M.gen ? e : NULL;
}

/* OthelloEngine.moves: the legal squares in priority order, [PASS] for a forced pass (the caller knows the game
 * is not over). */
static int move_list(u64 moves, uint8_t *out) {
    if (!moves) {
        out[0] = PASS;
        return 1;
    }
    int n = 0;
    for (int i = 0; i < 64 && n < 64; i++)
        if (moves >> PRIORITY_ORDER[i] & 1) out[n++] = PRIORITY_ORDER[i];
    return n;
}

/* The child after `move` (PASS: the other side moves), the other side to move, with its legal squares. */
static void play(u64 P, u64 O, int move, u64 *cP, u64 *cO, u64 *c_moves) {
    if (move == PASS) {
        *cP = O;
        *cO = P;
    } else {
        u64 f = flips_of(P, O, move);
        *cP = O ^ f;
        *cO = P | f | 1ULL << move;
    }
    *c_moves = legal(*cP, *cO);
}

static int in_list(const uint8_t *list, int n, int move) {
    for (int i = 0; i < n; i++)
        if (list[i] == move) return 1;
    return 0;
}

/* _Tree.ordered: OthelloEngine.order two or more plies above the horizon (hash move, wipe-outs, then fewest
 * replies, corners and killers earlier, history), else the hash move and the killers before the rest. */
static void order_moves(u64 P, u64 O, uint8_t *moves, int n, int hash_move, int ply, int depth) {
    const uint8_t *killers = M.killers[ply];
    if (depth >= 2) {
        long rank[64];
        for (int i = 0; i < n; i++) {
            int move = moves[i];
            if (move == PASS || move == hash_move) {
                rank[i] = -1000000;
                continue;
            }
            u64 f = flips_of(P, O, move);
            u64 new_own = P | f | 1ULL << move, new_opp = O ^ f;
            if (!new_opp) {
                rank[i] = -500000;
                continue;
            }
            rank[i] = popcount(legal(new_opp, new_own)) * 16 - M.history[move] / 64;
            if ((1ULL << move) & CORNERS) rank[i] -= 64;
            if (move == killers[0] || move == killers[1]) rank[i] -= 8;
        }
        for (int i = 1; i < n; i++) { /* insertion sort: stable, as Python's */
            long r = rank[i];
            uint8_t m = moves[i];
            int j = i - 1;
            while (j >= 0 && rank[j] > r) {
                rank[j + 1] = rank[j];
                moves[j + 1] = moves[j];
                j--;
            }
            rank[j + 1] = r;
            moves[j + 1] = m;
        }
        return;
    }
    uint8_t front[3];
    int nf = 0;
    int candidates[3] = {hash_move, killers[0], killers[1]};
    for (int c = 0; c < 3; c++) {
        int move = candidates[c];
        if (move != NO_MOVE && in_list(moves, n, move) && !in_list(front, nf, move)) front[nf++] = (uint8_t)move;
    }
    if (!nf) return;
    uint8_t rest[64];
    int nr = 0;
    for (int i = 0; i < n; i++)
        if (!in_list(front, nf, moves[i])) rest[nr++] = moves[i];
    memcpy(moves, front, (size_t)nf);
    memcpy(moves + nf, rest, (size_t)nr);
}

/* _Tree.reward: a move that caused a cutoff becomes a killer of its ply and gains history. */
static void reward(int move, int ply, int depth) {
    uint8_t *slots = M.killers[ply];
    if (slots[0] != move) {
        slots[1] = slots[0];
        slots[0] = (uint8_t)move;
    }
    M.history[move] += (long)depth * depth;
}

static int negamax(u64 P, u64 O, u64 P_moves, int depth, int alpha, int beta, int ply);

/* _Tree.expand: the children in order, the first with the full window, the rest null-window first. */
static int expand(u64 P, u64 O, uint8_t *moves, int n, int depth, int alpha, int beta, int ply) {
    int original_alpha = alpha, best = -INFINITY_SCORE, best_move = moves[0];
    for (int i = 0; i < n; i++) {
        u64 cP, cO, c_moves;
        play(P, O, moves[i], &cP, &cO, &c_moves);
        int score;
        if (i == 0) {
            score = -negamax(cP, cO, c_moves, depth - 1, -beta, -alpha, ply + 1);
        } else {
            score = -negamax(cP, cO, c_moves, depth - 1, -alpha - 1, -alpha, ply + 1);
            if (M.aborted) return 0;
            if (alpha < score && score < beta) score = -negamax(cP, cO, c_moves, depth - 1, -beta, -alpha, ply + 1);
        }
        if (M.aborted) return 0;
        if (score > best) {
            best = score;
            best_move = moves[i];
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) {
                    reward(moves[i], ply, depth);
                    break;
                }
            }
        }
    }
    int flag = best <= original_alpha ? UPPER : best >= beta ? LOWER : EXACT;
    mid_store(P, O, depth, flag, best, best_move, ply);
    return best;
}

/* _Tree.negamax: the score of the position searched `depth` plies deep within (alpha, beta), fail-soft. */
static int negamax(u64 P, u64 O, u64 P_moves, int depth, int alpha, int beta, int ply) {
    M.nodes++;
    if ((M.nodes & MID_CHECK_MASK) == 0 && M.stoppable && monotonic_now() >= M.deadline) M.aborted = 1;
    if (M.aborted) return 0;
    if (!P_moves && !legal(O, P)) return from_tt(game_over_score(P, O), ply);
    if (depth <= 0) {
        M.horizon = 1;
        return static_score(P, O, P_moves);
    }
    int hash_move = NO_MOVE;
    const MidEntry *e = mid_probe(P, O);
    if (e) {
        hash_move = e->move;
        if (e->depth >= depth) {
            int score = from_tt(e->score, ply);
            if (e->flag == EXACT || (e->flag == LOWER && score >= beta) || (e->flag == UPPER && score <= alpha)) {
                if (-PROVEN < score && score < PROVEN) M.horizon = 1;
                return score;
            }
        }
    }
    uint8_t moves[64];
    int n = move_list(P_moves, moves);
    order_moves(P, O, moves, n, hash_move, ply, depth);
    return expand(P, O, moves, n, depth, alpha, beta, ply);
}

/* _Tree.pv: the root's move, then the table's moves while they stay legal (at most `depth` moves). */
static int main_line(u64 P, u64 O, int first, int depth, uint8_t *line) {
    u64 seen[2 * MAX_DEPTH + 2][2];
    int length = 0;
    u64 p_moves;
    line[length++] = (uint8_t)first;
    play(P, O, first, &P, &O, &p_moves);
    seen[0][0] = P;
    seen[0][1] = O;
    int n_seen = 1;
    int limit = depth > 1 ? depth : 1;
    while (length < limit && (p_moves || legal(O, P))) {
        const MidEntry *e = mid_probe(P, O);
        if (!e || e->move == NO_MOVE) break;
        int move = e->move;
        if (move == PASS ? p_moves != 0 : !(p_moves >> move & 1)) break;
        line[length++] = (uint8_t)move;
        play(P, O, move, &P, &O, &p_moves);
        for (int i = 0; i < n_seen; i++)
            if (seen[i][0] == P && seen[i][1] == O) return length;
        seen[n_seen][0] = P;
        seen[n_seen][1] = O;
        n_seen++;
    }
    return length;
}

/* A fresh table for a new search (entries of older searches become stale). 0, or -1 with MemoryError set. */
static int mid_fresh(void) {
    if (!M.table) {
        M.table = calloc(MID_SLOTS, sizeof(MidEntry));
        if (!M.table) {
            PyErr_NoMemory();
            return -1;
        }
    }
    if (++M.gen == 0) {
        memset(M.table, 0, MID_SLOTS * sizeof(MidEntry));
        M.gen = 1;
    }
    M.count = 0;
    return 0;
}

/* ---- the exact endgame solver: othello_ai.EndgameSolver ------------------------------------------------------ */

/* A transposition table entry of the solver: bounds on the exact final difference of (P, O). */
typedef struct {
    u64 P, O;
    int8_t lower, upper;
    uint8_t move, empties;
    uint16_t gen;
} EndEntry;

#define END_BITS 19 /* 524,288 slots in buckets of two */
#define END_SLOTS (1u << END_BITS)
#define END_CHECK_MASK 4095
#define SORT_SEARCH_EMPTIES 16 /* from here up, children are ordered by a one-ply search of the evaluation */
#define SORT_REPLY_POINTS 8    /* ... plus this many points per reply the opponent would have */
#define ETC_EMPTIES 12         /* from here up, the children's table entries are read before any is searched */
#define ASPIRATION_EMPTIES 14  /* from here up, a wide window is first narrowed around the evaluation's guess */
#define ASPIRATION_DISCS 2     /* ... to this many discs either side, doubled after each miss */

static struct {
    EndEntry *table;
    uint16_t gen;
    int award; /* empties go to the winner (FFO's scoring) rather than to nobody (the game's) */
    long long nodes;
    double deadline;
    int aborted;
} E;

/* The final difference of a finished game for P, the empty squares counted as the scoring says. */
static int final_score(u64 P, u64 O) {
    int diff = popcount(P) - popcount(O);
    if (E.award && diff) {
        int empties = 64 - popcount(P | O);
        diff += diff > 0 ? empties : -empties;
    }
    return diff;
}

static EndEntry *end_probe(u64 P, u64 O) {
    EndEntry *bucket = &E.table[(hash_pair(P, O) >> (64 - END_BITS)) & ~1u];
    for (int i = 0; i < 2; i++)
        if (bucket[i].gen == E.gen && bucket[i].P == P && bucket[i].O == O) return &bucket[i];
    return NULL;
}

/* Record bounds, in the bucket's slot holding the same position, else a stale one, else the one with fewer empties. */
static void end_store(u64 P, u64 O, int lower, int upper, int move, int empties) {
    EndEntry *bucket = &E.table[(hash_pair(P, O) >> (64 - END_BITS)) & ~1u];
    EndEntry *e = NULL;
    for (int i = 0; i < 2 && !e; i++)
        if (bucket[i].gen == E.gen && bucket[i].P == P && bucket[i].O == O) e = &bucket[i];
    for (int i = 0; i < 2 && !e; i++)
        if (bucket[i].gen != E.gen) e = &bucket[i];
    if (!e) e = bucket[0].empties <= bucket[1].empties ? &bucket[0] : &bucket[1];
    e->P = P;
    e->O = O;
    e->lower = (int8_t)lower;
    e->upper = (int8_t)upper;
    e->move = (uint8_t)move;
    e->empties = (uint8_t)empties;
    e->gen = E.gen;
}

/* The quadrants (rows 1-4 / 5-8 by files a-d / e-h), for parity ordering. */
static const u64 QUADRANTS[4] = {0x000000000F0F0F0FULL, 0x00000000F0F0F0F0ULL, 0x0F0F0F0F00000000ULL,
                                 0xF0F0F0F000000000ULL};

/* The final difference with one empty square: P plays it, else O, else nobody. */
static int last_square(u64 P, u64 O, u64 empty) {
    int sq = lowest_square(empty);
    int diff = popcount(P) - popcount(O);
    int n = popcount(flips_of(P, O, sq));
    if (n) return diff + 2 * n + 1;
    n = popcount(flips_of(O, P, sq));
    if (n) return diff - 2 * n - 1;
    return final_score(P, O);
}

/* Negamax near the end: every empty square tried directly, those in quadrants with an odd number of empties
 * first; no table, no move generation. */
static int shallow(u64 P, u64 O, u64 empty, int count, int alpha, int beta, int passed) {
    E.nodes++;
    if (count == 1) return last_square(P, O, empty);
    int best = -LIMIT, moved = 0;
    for (int parity = 1; parity >= 0; parity--) {
        for (int q = 0; q < 4; q++) {
            u64 part = empty & QUADRANTS[q];
            if (!part || (popcount(part) & 1) != parity) continue;
            for (; part; part &= part - 1) {
                int sq = lowest_square(part);
                u64 f = flips_of(P, O, sq);
                if (!f) continue;
                moved = 1;
                u64 bit = 1ULL << sq;
                int score = -shallow(O ^ f, P | f | bit, empty ^ bit, count - 1, -beta, -alpha, 0);
                if (score > best) {
                    best = score;
                    if (score > alpha) {
                        alpha = score;
                        if (alpha >= beta) return best;
                    }
                }
            }
        }
    }
    if (moved) return best;
    if (passed) return final_score(P, O);
    return -shallow(O, P, empty, count, -beta, -alpha, 1);
}

typedef struct {
    u64 P, O; /* the child, the opponent to move: P is the opponent's discs */
    int sq, rank;
} Child;

/* A plain negamax of the static evaluation `depth` plies deep (no table, no clock; `moves` are P's legal squares),
 * in points: only to order the solver's children where many empties remain. A finished game counts far beyond any
 * evaluation. */
static int sort_search(u64 P, u64 O, u64 moves, int depth, int alpha, int beta) {
    if (depth <= 0) return static_score(P, O, moves);
    if (!moves) {
        u64 replies = legal(O, P);
        if (!replies) return (popcount(P) - popcount(O)) * 1000;
        return -sort_search(O, P, replies, depth - 1, -beta, -alpha);
    }
    int best = -INFINITY_SCORE;
    for (; moves; moves &= moves - 1) {
        int sq = lowest_square(moves);
        u64 f = flips_of(P, O, sq);
        u64 cP = O ^ f, cO = P | f | 1ULL << sq;
        int score = -sort_search(cP, cO, legal(cP, cO), depth - 1, -beta, -alpha);
        if (score > best) {
            best = score;
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) break;
            }
        }
    }
    return best;
}

/* The children of P's `moves`, the table's best move first, then fastest first: fewest opponent replies (a reply
 * on a corner counts twice), then fewest empty squares next to P's discs (the opponent's potential mobility); a
 * move to a corner counts 1.5 replies less; ties in square order. On self-play positions with 19-20 empties this
 * visits a quarter fewer nodes than replies alone (EndgameSolver's order). With SORT_SEARCH_EMPTIES or more empty
 * squares the order is the opponent's one-ply search score instead (lowest first), plus SORT_REPLY_POINTS a reply:
 * on FFO #24-#38 a third less time (issue 38, session 3; docs/ai.md). */
static int fastest_first(u64 P, u64 O, u64 moves, int hash_move, Child *out) {
    int n = 0, searched = popcount(~(P | O)) >= SORT_SEARCH_EMPTIES;
    for (; moves; moves &= moves - 1) {
        int sq = lowest_square(moves);
        u64 f = flips_of(P, O, sq), bit = 1ULL << sq;
        Child *c = &out[n++];
        c->P = O ^ f;
        c->O = P | f | bit;
        c->sq = sq;
        if (sq == hash_move) {
            c->rank = -4 * INFINITY_SCORE;
        } else if (searched) {
            u64 replies = legal(c->P, c->O); /* once: the search's moves and the reply count */
            c->rank = sort_search(c->P, c->O, replies, 1, -INFINITY_SCORE, INFINITY_SCORE) +
                      SORT_REPLY_POINTS * popcount(replies);
        } else {
            u64 replies = legal(c->P, c->O);
            c->rank = (popcount(replies) + popcount(replies & CORNERS)) * 16 +
                      popcount(neighbours(c->O) & ~(c->P | c->O)) * 2 - ((bit & CORNERS) ? 24 : 0);
        }
    }
    for (int i = 1; i < n; i++) {
        Child c = out[i];
        int j = i - 1;
        while (j >= 0 && out[j].rank > c.rank) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = c;
    }
    return n;
}

/* EndgameSolver._search: negamax over the `count` empty squares, fail-soft within (alpha, beta). */
static int solve_node(u64 P, u64 O, u64 empty, int count, int alpha, int beta, int passed) {
    if (count <= SHALLOW_EMPTIES) return shallow(P, O, empty, count, alpha, beta, passed);
    E.nodes++;
    if ((E.nodes & END_CHECK_MASK) == 0 && E.deadline >= 0 && monotonic_now() >= E.deadline) E.aborted = 1;
    if (E.aborted) return 0;
    u64 moves = legal(P, O);
    if (!moves) {
        if (passed) return final_score(P, O);
        return -solve_node(O, P, empty, count, -beta, -alpha, 1);
    }
    int lower = -LIMIT, upper = LIMIT, hash_move = NO_MOVE;
    /* The opponent's discs made stable by the edges stay theirs: P ends at most 64 - 2 * stable ahead (any
     * scoring). On self-play positions with 19-20 empties this cut 8% of the nodes. */
    int most = 64 - 2 * popcount(stable_edge_discs(O, P));
    if (most <= alpha) return most;
    if (most < beta) beta = most;
    EndEntry *e = end_probe(P, O);
    if (e) {
        lower = e->lower;
        upper = e->upper;
        hash_move = e->move;
        if (lower >= beta || lower == upper) return lower;
        if (upper <= alpha) return upper;
        if (lower > alpha) alpha = lower;
        if (upper < beta) beta = upper;
    }
    int original_alpha = alpha, best = -LIMIT, best_move = NO_MOVE;
    Child children[64]; /* a position has at most 33 legal moves; every square for safety */
    int n = fastest_first(P, O, moves, hash_move, children);
    if (count >= ETC_EMPTIES) {
        /* Enhanced transposition cut-off: a child whose stored upper bound for the opponent already gives P beta. */
        for (int i = 0; i < n; i++) {
            const EndEntry *child = end_probe(children[i].P, children[i].O);
            if (child && -child->upper >= beta) {
                end_store(P, O, -child->upper, upper, children[i].sq, count);
                return -child->upper;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        const Child *c = &children[i];
        u64 rest = empty ^ 1ULL << c->sq;
        int score;
        if (i == 0) {
            score = -solve_node(c->P, c->O, rest, count - 1, -beta, -alpha, 0);
        } else {
            score = -solve_node(c->P, c->O, rest, count - 1, -alpha - 1, -alpha, 0);
            if (!E.aborted && alpha < score && score < beta)
                score = -solve_node(c->P, c->O, rest, count - 1, -beta, -alpha, 0);
        }
        if (E.aborted) return 0;
        if (score > best) {
            best = score;
            best_move = c->sq;
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) break;
            }
        }
    }
    if (best <= original_alpha) upper = best < upper ? best : upper;
    else if (best >= beta) lower = best > lower ? best : lower;
    else lower = upper = best;
    end_store(P, O, lower, upper, best_move, count);
    return best;
}

/* EndgameSolver.best_move: the best square and its difference (exact inside (alpha, beta), else a bound; the
 * first move at or above beta is returned at once); *move = PASS with no legal square. */
static int solve_root(u64 P, u64 O, int alpha, int beta, int *move) {
    u64 empty = ~(P | O);
    int count = popcount(empty);
    u64 moves = legal(P, O);
    if (!moves) {
        *move = PASS;
        if (!legal(O, P)) return final_score(P, O);
        return -solve_node(O, P, empty, count, -beta, -alpha, 1);
    }
    const EndEntry *e = end_probe(P, O);
    Child children[64]; /* a position has at most 33 legal moves; every square for safety */
    int n = fastest_first(P, O, moves, e ? e->move : NO_MOVE, children);
    int best = -LIMIT, best_sq = -1;
    for (int i = 0; i < n; i++) {
        const Child *c = &children[i];
        u64 rest = empty ^ 1ULL << c->sq;
        int floor = alpha > best ? alpha : best, score;
        if (best_sq < 0) {
            score = -solve_node(c->P, c->O, rest, count - 1, -beta, -floor, 0);
        } else {
            score = -solve_node(c->P, c->O, rest, count - 1, -floor - 1, -floor, 0);
            if (!E.aborted && floor < score && score < beta)
                score = -solve_node(c->P, c->O, rest, count - 1, -beta, -floor, 0);
        }
        if (E.aborted) return 0;
        if (best_sq < 0 || score > best) {
            best_sq = c->sq;
            best = score;
            if (best >= beta) break;
        }
    }
    *move = best_sq;
    return best;
}

/* solve_root with a wide window narrowed first: with ASPIRATION_EMPTIES or more empties and the pattern tables on,
 * a window of ASPIRATION_DISCS either side of the evaluation's guess (a 4-ply sort_search, in discs), widened
 * towards the side it missed, doubling, until the value falls inside or at the caller's own bounds: the same
 * answer as one search over (alpha, beta), in half the time on FFO #38 (docs/ai.md). */
static int solve_narrowed(u64 P, u64 O, int alpha, int beta, int *move) {
    int count = popcount(~(P | O)), width = ASPIRATION_DISCS;
    if (count < ASPIRATION_EMPTIES || !PAT.on || beta - alpha <= 4 * width) return solve_root(P, O, alpha, beta, move);
    int guess = floor_div(sort_search(P, O, legal(P, O), 4, -INFINITY_SCORE, INFINITY_SCORE), PATTERN_POINTS);
    int low = guess - width > alpha ? guess - width : alpha, high = guess + width < beta ? guess + width : beta;
    if (low >= high) {
        low = alpha;
        high = beta;
    }
    for (;;) {
        int value = solve_root(P, O, low, high, move);
        if (E.aborted) return 0;
        if (value <= low && low > alpha) { /* below the window: the value is at most `value` */
            width *= 2;
            high = value + 1 < beta ? value + 1 : beta;
            low = value - width > alpha ? value - width : alpha;
        } else if (value >= high && high < beta) { /* above it: at least `value` */
            width *= 2;
            low = value - 1 > alpha ? value - 1 : alpha;
            high = value + width < beta ? value + width : beta;
        } else {
            return value;
        }
    }
}

/* ---- the Python interface ---------------------------------------------------------------------------------- */

/* A board word from a Python int of at most 64 bits; -1 with ValueError or TypeError set otherwise. */
static int as_board(PyObject *value, u64 *out) {
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "a board must be an int");
        return -1;
    }
    if (_PyLong_Sign(value) < 0 || _PyLong_NumBits(value) > 64) {
        PyErr_SetString(PyExc_ValueError, "a board must be a mask of the 64 squares of an 8x8 board");
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(value);
    return *out == (u64)-1 && PyErr_Occurred() ? -1 : 0;
}

/* The two boards of a call's first two arguments, which must not share a square. 0, or -1 with an exception. */
static int read_sides(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *usage, u64 *P, u64 *O) {
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "expected %s", usage);
        return -1;
    }
    if (as_board(args[0], P) < 0 || as_board(args[1], O) < 0) return -1;
    if (*P & *O) {
        PyErr_SetString(PyExc_ValueError, "the two sides' discs overlap");
        return -1;
    }
    return 0;
}

/* An int argument within [low, high]; -1 with an exception otherwise (check PyErr_Occurred). */
static long int_in(PyObject *value, long low, long high, const char *what) {
    long n = PyLong_AsLong(value);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < low || n > high) {
        PyErr_Format(PyExc_ValueError, "%s must be in %ld..%ld, not %ld", what, low, high, n);
        return -1;
    }
    return n;
}

static PyObject *move_object(int move) {
    if (move == PASS) Py_RETURN_NONE;
    return PyLong_FromLong(move);
}

static PyObject *py_legal_moves(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 2, "legal_moves(own, opp)", &P, &O) < 0) return NULL;
    return PyLong_FromUnsignedLongLong(legal(P, O));
}

static PyObject *py_flips(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 3, "flips(own, opp, sq)", &P, &O) < 0) return NULL;
    long sq = int_in(args[2], 0, 63, "sq");
    if (sq == -1 && PyErr_Occurred()) return NULL;
    if ((P | O) >> sq & 1) return PyLong_FromLong(0);
    return PyLong_FromUnsignedLongLong(flips_of(P, O, (int)sq));
}

static PyObject *py_perft(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 3, "perft(own, opp, depth)", &P, &O) < 0) return NULL;
    long depth = int_in(args[2], 0, 20, "depth");
    if (depth == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLongLong(perft(P, O, (int)depth, 0));
}

static PyObject *py_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 2, "evaluate(own, opp)", &P, &O) < 0) return NULL;
    return PyLong_FromLong(evaluate(P, O, legal(P, O)));
}

static PyObject *py_pattern_evaluate(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 2, "pattern_evaluate(own, opp)", &P, &O) < 0) return NULL;
    if (!PAT.weights) {
        PyErr_SetString(PyExc_ValueError, "no pattern tables are loaded");
        return NULL;
    }
    return PyLong_FromLong(pattern_evaluate(P, O, legal(P, O)));
}

/* One instance (offset, squares) of load_patterns into slot i; 0, or -1 with an exception set. */
static int read_instance(PyObject *item, int i, long block) {
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(item, 1))) {
        PyErr_SetString(PyExc_TypeError, "an instance must be a tuple (offset, squares as bytes)");
        return -1;
    }
    long offset = int_in(PyTuple_GET_ITEM(item, 0), 0, block, "an instance's offset");
    if (offset == -1 && PyErr_Occurred()) return -1;
    PyObject *squares = PyTuple_GET_ITEM(item, 1);
    Py_ssize_t length = PyBytes_GET_SIZE(squares);
    const uint8_t *sq = (const uint8_t *)PyBytes_AS_STRING(squares);
    long size = 1;
    for (Py_ssize_t k = 0; k < length && k < MAX_PATTERN_SQUARES; k++) size *= 3;
    if (length < 1 || length > MAX_PATTERN_SQUARES || offset + size > block - PATTERN_EXTRAS) {
        PyErr_SetString(PyExc_ValueError, "an instance must have 1-10 squares and its table must fit in the block");
        return -1;
    }
    for (Py_ssize_t k = 0; k < length; k++) {
        if (sq[k] > 63) {
            PyErr_SetString(PyExc_ValueError, "a square must be in 0..63");
            return -1;
        }
        PAT.squares[i][k] = sq[k];
    }
    PAT.length[i] = (int)length;
    PAT.offset[i] = (int)offset;
    return 0;
}

static PyObject *py_load_patterns(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "expected load_patterns(instances: tuple, block: int, weights: bytes)");
        return NULL;
    }
    long block = int_in(args[1], PATTERN_EXTRAS + 1, 1L << 24, "block");
    if (block == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(args[0]);
    if (count > MAX_INSTANCES) {
        PyErr_Format(PyExc_ValueError, "at most %d instances", MAX_INSTANCES);
        return NULL;
    }
    if (PyBytes_GET_SIZE(args[2]) != (Py_ssize_t)(PATTERN_PHASES * block * sizeof(int16_t))) {
        PyErr_Format(PyExc_ValueError, "weights must be %d blocks of %ld int16", PATTERN_PHASES, block);
        return NULL;
    }
    free(PAT.weights);
    PAT.weights = NULL;
    PAT.on = 0;
    for (Py_ssize_t i = 0; i < count; i++)
        if (read_instance(PyTuple_GET_ITEM(args[0], i), (int)i, block) < 0) return NULL;
    PAT.weights = malloc((size_t)PyBytes_GET_SIZE(args[2]));
    if (!PAT.weights) return PyErr_NoMemory();
    memcpy(PAT.weights, PyBytes_AS_STRING(args[2]), (size_t)PyBytes_GET_SIZE(args[2]));
    PAT.count = (int)count;
    PAT.block = (int)block;
    PAT.on = 1;
    Py_RETURN_NONE;
}

static PyObject *py_use_patterns(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "expected use_patterns(on)");
        return NULL;
    }
    int on = PyObject_IsTrue(args[0]);
    if (on < 0) return NULL;
    if (on && !PAT.weights) {
        PyErr_SetString(PyExc_ValueError, "no pattern tables are loaded");
        return NULL;
    }
    int was = PAT.on;
    PAT.on = on;
    return PyBool_FromLong(was);
}

static PyObject *py_weights(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs) {
        PyErr_SetString(PyExc_TypeError, "expected weights()");
        return NULL;
    }
    PyObject *rows = PyTuple_New(65);
    if (!rows) return NULL;
    for (int e = 0; e <= 64; e++) {
        PyObject *row = PyTuple_New(N_WEIGHTS);
        if (!row) {
            Py_DECREF(rows);
            return NULL;
        }
        for (int f = 0; f < N_WEIGHTS; f++) PyTuple_SET_ITEM(row, f, PyLong_FromLong(WEIGHTS[e][f]));
        PyTuple_SET_ITEM(rows, e, row);
    }
    return rows;
}

static PyObject *py_search(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 4, "search(own, opp, max_depth, deadline)", &P, &O) < 0) return NULL;
    long max_depth = int_in(args[2], 1, MAX_DEPTH, "max_depth");
    if (max_depth == -1 && PyErr_Occurred()) return NULL;
    double deadline = PyFloat_AsDouble(args[3]);
    if (deadline == -1.0 && PyErr_Occurred()) return NULL;
    u64 p_moves = legal(P, O);
    if (!p_moves && !legal(O, P)) {
        PyErr_SetString(PyExc_ValueError, "the game is over: there is no move to search");
        return NULL;
    }
    if (mid_fresh() < 0) return NULL;
    double start = monotonic_now();
    M.nodes = 0;
    M.deadline = deadline;
    M.aborted = 0;
    memset(M.killers, NO_MOVE, sizeof M.killers);
    memset(M.history, 0, sizeof M.history);
    uint8_t moves[64];
    int next_scores[64];
    int n = move_list(p_moves, moves);
    if (n == 1) max_depth = 1;
    int best_move = moves[0], best_score = 0, done = 0;
    for (int depth = 1; depth <= max_depth; depth++) {
        M.stoppable = depth > 1 && deadline >= 0;
        M.horizon = 0;
        int best = -INFINITY_SCORE;
        for (int i = 0; i < n && !M.aborted; i++) { /* _Tree.root */
            u64 cP, cO, c_moves;
            play(P, O, moves[i], &cP, &cO, &c_moves);
            int floor = best, score;
            if (i == 0) {
                score = -negamax(cP, cO, c_moves, depth - 1, -INFINITY_SCORE, -floor, 1);
            } else {
                score = -negamax(cP, cO, c_moves, depth - 1, -floor - 1, -floor, 1);
                if (!M.aborted && score > floor) score = -negamax(cP, cO, c_moves, depth - 1, -INFINITY_SCORE, -floor, 1);
            }
            next_scores[i] = score;
            if (score > best) best = score;
        }
        if (M.aborted) break;
        done = depth;
        int top = 0;
        for (int i = 1; i < n; i++)
            if (next_scores[i] > next_scores[top]) top = i;
        best_move = moves[top];
        best_score = next_scores[top];
        /* _root_order: the best first, then by score (stable) */
        uint8_t order[64];
        int order_scores[64], k = 0;
        order[k] = moves[top];
        order_scores[k++] = next_scores[top];
        for (int i = 0; i < n; i++) {
            if (i == top) continue;
            int j = k;
            while (j > 1 && order_scores[j - 1] < next_scores[i]) {
                order[j] = order[j - 1];
                order_scores[j] = order_scores[j - 1];
                j--;
            }
            order[j] = moves[i];
            order_scores[j] = next_scores[i];
            k++;
        }
        memcpy(moves, order, (size_t)n);
        if (!M.horizon || abs(best_score) >= PROVEN) break;
        if (deadline >= 0 && monotonic_now() - start >= (deadline - start) * NEXT_ITERATION_SHARE) break;
    }
    uint8_t line[MAX_DEPTH + 2];
    int length = main_line(P, O, best_move, done, line);
    PyObject *pv = PyTuple_New(length);
    if (!pv) return NULL;
    for (int i = 0; i < length; i++) {
        PyObject *item = move_object(line[i]);
        if (!item) {
            Py_DECREF(pv);
            return NULL;
        }
        PyTuple_SET_ITEM(pv, i, item);
    }
    return Py_BuildValue("(NiiLN)", move_object(best_move), best_score, done, M.nodes, pv);
}

static PyObject *py_solve(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    u64 P, O;
    if (read_sides(args, nargs, 7, "solve(own, opp, alpha, beta, deadline, fresh, award)", &P, &O) < 0) return NULL;
    long alpha = int_in(args[2], -LIMIT, LIMIT, "alpha");
    if (alpha == -1 && PyErr_Occurred()) return NULL;
    long beta = int_in(args[3], -LIMIT, LIMIT, "beta");
    if (beta == -1 && PyErr_Occurred()) return NULL;
    if (alpha >= beta) {
        PyErr_SetString(PyExc_ValueError, "alpha must be below beta");
        return NULL;
    }
    double deadline = PyFloat_AsDouble(args[4]);
    if (deadline == -1.0 && PyErr_Occurred()) return NULL;
    int fresh = PyObject_IsTrue(args[5]), award = PyObject_IsTrue(args[6]);
    if (fresh < 0 || award < 0) return NULL;
    if (!E.table) {
        E.table = calloc(END_SLOTS, sizeof(EndEntry));
        if (!E.table) return PyErr_NoMemory();
        fresh = 1;
    }
    if (fresh || award != E.award) {
        if (++E.gen == 0) {
            memset(E.table, 0, END_SLOTS * sizeof(EndEntry));
            E.gen = 1;
        }
    }
    E.award = award;
    E.nodes = 0;
    E.deadline = deadline;
    E.aborted = 0;
    int move;
    int diff = solve_narrowed(P, O, (int)alpha, (int)beta, &move);
    if (E.aborted) Py_RETURN_NONE;
    return Py_BuildValue("(NiL)", move_object(move), diff, E.nodes);
}

static PyMethodDef methods[] = {
    {"legal_moves", (PyCFunction)(void (*)(void))py_legal_moves, METH_FASTCALL,
     "legal_moves(own, opp) -> int: the squares own may play (othello.legal_mask on 8x8)."},
    {"flips", (PyCFunction)(void (*)(void))py_flips, METH_FASTCALL,
     "flips(own, opp, sq) -> int: the discs own flips on sq, 0 if illegal (othello.flip_mask on 8x8)."},
    {"perft", (PyCFunction)(void (*)(void))py_perft, METH_FASTCALL,
     "perft(own, opp, depth) -> int: leaves depth plies below, by Bik's convention (othello._perft)."},
    {"evaluate", (PyCFunction)(void (*)(void))py_evaluate, METH_FASTCALL,
     "evaluate(own, opp) -> int: othello_ai.evaluate_sides on 8x8 with own to move."},
    {"pattern_evaluate", (PyCFunction)(void (*)(void))py_pattern_evaluate, METH_FASTCALL,
     "pattern_evaluate(own, opp) -> int: othello_patterns.evaluate with the loaded tables, own to move."},
    {"load_patterns", (PyCFunction)(void (*)(void))py_load_patterns, METH_FASTCALL,
     "load_patterns(instances, block, weights) -> None: the pattern tables (instances: (offset, squares) pairs; "
     "weights: 6 blocks of `block` little-endian int16); search uses them from now on."},
    {"use_patterns", (PyCFunction)(void (*)(void))py_use_patterns, METH_FASTCALL,
     "use_patterns(on) -> bool: whether search scores leaves with the loaded tables (else the hand weights); "
     "returns the previous setting."},
    {"weights", (PyCFunction)(void (*)(void))py_weights, METH_FASTCALL,
     "weights() -> tuple: the phase weights by empty squares, the fields of othello_ai.Weights in order."},
    {"search", (PyCFunction)(void (*)(void))py_search, METH_FASTCALL,
     "search(own, opp, max_depth, deadline) -> (move, score, depth, nodes, main line): search.search over "
     "othello_ai.OthelloEngine(8) without noise; deadline < 0: none."},
    {"solve", (PyCFunction)(void (*)(void))py_solve, METH_FASTCALL,
     "solve(own, opp, alpha, beta, deadline, fresh, award) -> (move, difference, nodes) or None if the deadline "
     "passed: othello_ai.EndgameSolver.best_move; fresh: forget the table of earlier calls; award: empty squares "
     "at the end go to the winner (FFO's scoring)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_othellokernel",
    "The Othello AI's optional compiled kernel: 8x8 moves, level 5's search and the exact endgame solver.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__othellokernel(void) {
    build_rays();
    build_evaluation();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "WIN", WIN) || PyModule_AddIntConstant(m, "GAME_OVER_BASE", GAME_OVER_BASE) ||
        PyModule_AddIntConstant(m, "DISC_POINTS", DISC_POINTS) || PyModule_AddIntConstant(m, "TT_LIMIT", TT_LIMIT) ||
        PyModule_AddIntConstant(m, "MAX_DEPTH", MAX_DEPTH)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
