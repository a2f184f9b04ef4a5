/* The Tron AI's optional compiled kernel (issue 18, sessions 8-10): level 5's leaf evaluation, endgame rides and
 * contact search.
 *
 * tron_ai.py keeps a board as one Python int, a bit per square of a padded grid of odd stride (bit set = open),
 * framed by blocked squares. This module takes those ints and computes exactly what the pure-Python functions
 * of tron_ai.py compute (tests/ai/test_tron_kernel.py checks it on thousands of positions):
 *
 *   split(free, stride, first, second, first_ahead) -> (mine, theirs, touching)          `_split`
 *   chamber_value(territory, free, stride, head, edge) -> int                           `chamber_value`, parity off
 *   chamber_fill(free, stride, head) -> int                                              `chamber_fill`
 *   chain_fill(free, stride, head) -> int                                                `chain_fill`
 *   territory_score(stride, free, first, second, first_ahead, draw, edge, chains) -> int `territory_score`
 *                                                     with chambers on, parity off, no close-split rides
 *   room_after(free, stride, head) -> int                                                 `room_after`'s room
 *   greedy_ride(free, stride, head, deadline) -> (squares, late)                          `greedy_ride` (session 9:
 *                                                     the endgame search completes every branch with it)
 *   contact_search(free, stride, ours, theirs, draw_penalty, edge, chains, deadline, max_depth
 *                  [, pinned_deadline, tie_draw])
 *       -> (move, score, depth, nodes, main line)     level 5's search in contact (session 10): search.py's core
 *                                                     over `Level5Engine`, the same value at every depth; with
 *                                                     the last two, a root pinned at the draw value plays the
 *                                                     best of its drawn moves (session 15); server/ai/tron/
 *                                                     contact.py is this search in Python (issue 38)
 *
 * Inside, a board is one 64-bit word per row (bit x = column x), so a neighbour is a shift within the row or
 * the row above or below, and a breadth-first layer is a few word operations per row. Boards wider than 64
 * (stride > 64) or taller than MAX_ROWS rows are not handled: every function then returns NotImplemented and
 * the caller uses the pure-Python code. The chamber tree is Tarjan's low-links square by square (the Python
 * code contracts squares that cannot cut into pieces first; the chambers, and so every value, are the same).
 * Plain C API, no dependency; the GIL is held throughout and nothing in a computation calls back into Python, so
 * the static work buffers are never used by two calls at once (single-phase init: a free-threaded Python turns
 * its GIL back on for this module). The server runs its AI in worker processes anyway.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_STRIDE 64
#define MAX_ROWS 128
#define MAX_CELLS (MAX_STRIDE * MAX_ROWS)
#define MAX_BYTES (MAX_CELLS / 8)

/* tron_ai's weights (server/ai/tron/params.py); the module exports them and they are checked before it is used. */
#define CELL 55
#define APART 50000
#define APART_CELL 500

typedef uint64_t u64;

/* A board: rows[1..nrows] hold rows 0..nrows-1 of the grid; rows[0] and rows[nrows+1] stay 0 (guards). */
typedef struct {
    u64 rows[MAX_ROWS + 2];
} Board;

static int popcount64(u64 x) { return __builtin_popcountll(x); }

/* ---- conversion between Python ints and boards --------------------------------------------------------------- */

static unsigned char byte_buf[MAX_BYTES + 16];

/* The number of bits of a non-negative int; -1 with an exception set if it is not one. */
static int64_t bits_of(PyObject *value) {
    if (!PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "a board mask must be an int");
        return -1;
    }
    int sign = _PyLong_Sign(value);
    if (sign < 0) {
        PyErr_SetString(PyExc_ValueError, "a board mask must not be negative");
        return -1;
    }
    if (sign == 0) return 0;
    size_t bits = _PyLong_NumBits(value);
    if (bits == (size_t)-1 && PyErr_Occurred()) return -1;
    return (int64_t)bits;
}

/* Read `value` into `board` (rows 0..nrows-1; the caller has checked that its bits fit). 0 or -1 (exception). */
static int load(PyObject *value, int stride, int nrows, Board *board) {
    memset(board->rows, 0, sizeof(u64) * (size_t)(nrows + 2));
    int64_t bits = bits_of(value);
    if (bits < 0) return -1;
    if (bits == 0) return 0;
    size_t nbytes = (size_t)((bits + 7) / 8);
    memset(byte_buf, 0, nbytes + 16);
#if PY_VERSION_HEX >= 0x030D0000
    if (_PyLong_AsByteArray((PyLongObject *)value, byte_buf, nbytes, 1, 0, 1) < 0) return -1;
#else
    if (_PyLong_AsByteArray((PyLongObject *)value, byte_buf, nbytes, 1, 0) < 0) return -1;
#endif
    u64 mask = stride == 64 ? ~(u64)0 : (((u64)1 << stride) - 1);
    int used = (int)((bits + stride - 1) / stride);
    for (int y = 0; y < used; y++) {
        int64_t offset = (int64_t)y * stride;
        const unsigned char *p = byte_buf + (offset >> 3);
        int shift = (int)(offset & 7);
        u64 word = 0;
        for (int b = 7; b >= 0; b--) word = word << 8 | p[b];
        word >>= shift;
        if (shift) word |= (u64)p[8] << (64 - shift);
        board->rows[y + 1] = word & mask;
    }
    return 0;
}

/* A new Python int from rows 0..nrows-1 of `board`. */
static PyObject *store(const Board *board, int stride, int nrows) {
    static u64 words[MAX_CELLS / 64 + 2];
    int nwords = (stride * nrows + 63) / 64 + 1;
    memset(words, 0, sizeof(u64) * (size_t)nwords);
    for (int y = 0; y < nrows; y++) {
        u64 row = board->rows[y + 1];
        if (!row) continue;
        int64_t offset = (int64_t)y * stride;
        int w = (int)(offset >> 6), shift = (int)(offset & 63);
        words[w] |= row << shift;
        if (shift) words[w + 1] |= row >> (64 - shift);
    }
    size_t nbytes = (size_t)nwords * 8;
    for (int w = 0; w < nwords; w++) {
        u64 word = words[w];
        for (int b = 0; b < 8; b++) byte_buf[w * 8 + b] = (unsigned char)(word >> (8 * b));
    }
    return _PyLong_FromByteArray(byte_buf, nbytes, 1, 0);
}

/* Whether a board of this stride with masks of up to `bits` bits and a head at `index` fits; sets *nrows. */
static int fits(long stride, int64_t bits, long index, int *nrows) {
    if (stride < 3 || stride > MAX_STRIDE) return 0;
    int64_t rows = (bits + stride - 1) / stride;
    int64_t head_rows = index / stride + 2;
    if (head_rows > rows) rows = head_rows;
    if (rows > MAX_ROWS) return 0;
    *nrows = (int)rows;
    return 1;
}

/* ---- board operations ------------------------------------------------------------------------------------- */

/* The four-neighbour spread of row y of `front` (not masked). */
static inline u64 spread_row(const u64 *front, int y) {
    return front[y] << 1 | front[y] >> 1 | front[y - 1] | front[y + 1];
}

/* tron_ai.flood: the open squares of `free` connected to square `start`, `start` excluded. */
static void flood(const Board *free, int stride, int nrows, long start, Board *region) {
    static Board front, next, rest;
    memset(region->rows, 0, sizeof(u64) * (size_t)(nrows + 2));
    memset(front.rows, 0, sizeof(u64) * (size_t)(nrows + 2));
    memset(next.rows, 0, sizeof(u64) * (size_t)(nrows + 2));
    memcpy(rest.rows, free->rows, sizeof(u64) * (size_t)(nrows + 2));
    int y0 = (int)(start / stride) + 1;
    front.rows[y0] = (u64)1 << (start % stride);
    int lo = y0, hi = y0;
    for (;;) {
        int nlo = lo > 1 ? lo - 1 : 1, nhi = hi < nrows ? hi + 1 : nrows;
        int new_lo = 0, new_hi = -1;
        for (int y = nlo; y <= nhi; y++) {
            u64 grown = spread_row(front.rows, y) & rest.rows[y];
            next.rows[y] = grown;
            if (grown) {
                rest.rows[y] ^= grown;
                region->rows[y] |= grown;
                if (!new_lo) new_lo = y;
                new_hi = y;
            }
        }
        for (int y = lo; y <= hi; y++) front.rows[y] = 0;
        if (!new_lo) break;
        for (int y = new_lo; y <= new_hi; y++) {
            front.rows[y] = next.rows[y];
            next.rows[y] = 0;
        }
        for (int y = nlo; y <= nhi; y++) next.rows[y] = 0;
        lo = new_lo;
        hi = new_hi;
    }
}

/* tron_ai._split: (first's squares, second's, touching). The fronts' rows are tracked (lo..hi), so a layer
 * touches only the rows next to them. */
static int split(const Board *free_in, int stride, int nrows, long first, long second, int first_ahead, Board *mine,
                 Board *theirs) {
    static Board free, fa, fb, na, nb, both_ways;
    size_t size = sizeof(u64) * (size_t)(nrows + 2);
    memcpy(free.rows, free_in->rows, size);
    memset(fa.rows, 0, size);
    memset(fb.rows, 0, size);
    memset(both_ways.rows, 0, size);
    memset(theirs->rows, 0, size);
    int ya = (int)(first / stride) + 1, yb = (int)(second / stride) + 1;
    fa.rows[ya] = (u64)1 << (first % stride);
    fb.rows[yb] = (u64)1 << (second % stride);
    int lo = ya, hi = ya;
    if (first_ahead) {
        int from = lo > 1 ? lo - 1 : 1, to = hi < nrows ? hi + 1 : nrows;
        for (int y = from; y <= to; y++) na.rows[y] = spread_row(fa.rows, y) & free.rows[y];
        for (int y = from; y <= to; y++) {
            fa.rows[y] = na.rows[y];
            free.rows[y] ^= na.rows[y];
        }
        lo = from;
        hi = to;
    }
    if (yb < lo) lo = yb;
    if (yb > hi) hi = yb;
    int any_b = 1;
    while (any_b) {
        any_b = 0;
        int from = lo > 1 ? lo - 1 : 1, to = hi < nrows ? hi + 1 : nrows;
        int new_lo = nrows + 1, new_hi = 0;
        for (int y = from; y <= to; y++) {
            u64 a = spread_row(fa.rows, y) & free.rows[y];
            u64 b = spread_row(fb.rows, y) & free.rows[y];
            free.rows[y] ^= a | b;
            u64 both = a & b;
            if (both) {
                both_ways.rows[y] |= both;
                a ^= both;
                b ^= both;
            }
            theirs->rows[y] |= b;
            na.rows[y] = a;
            nb.rows[y] = b;
            if (a | b) {
                if (y < new_lo) new_lo = y;
                new_hi = y;
            }
            any_b |= b != 0;
        }
        for (int y = from; y <= to; y++) {
            fa.rows[y] = na.rows[y];
            fb.rows[y] = nb.rows[y];
        }
        lo = new_lo;
        hi = new_hi;
    }
    while (lo <= hi) {
        int from = lo > 1 ? lo - 1 : 1, to = hi < nrows ? hi + 1 : nrows;
        int new_lo = nrows + 1, new_hi = 0;
        for (int y = from; y <= to; y++) {
            u64 a = spread_row(fa.rows, y) & free.rows[y];
            free.rows[y] ^= a;
            na.rows[y] = a;
            if (a) {
                if (y < new_lo) new_lo = y;
                new_hi = y;
            }
        }
        for (int y = from; y <= to; y++) fa.rows[y] = na.rows[y];
        lo = new_lo;
        hi = new_hi;
    }
    int touching = 0;
    mine->rows[0] = mine->rows[nrows + 1] = 0;
    for (int y = 1; y <= nrows; y++) {
        mine->rows[y] = free_in->rows[y] ^ free.rows[y] ^ theirs->rows[y] ^ both_ways.rows[y];
        if (both_ways.rows[y]) touching = 1;
    }
    if (!touching) {
        for (int y = 1; y <= nrows; y++) {
            if (spread_row(mine->rows, y) & theirs->rows[y]) {
                touching = 1;
                break;
            }
        }
    }
    return touching;
}

/* tron_ai.local_cuts over rows: the squares whose open neighbours fall into two or more groups around them. */
static void local_cuts(const Board *graph, int nrows, Board *cuts) {
    cuts->rows[0] = cuts->rows[nrows + 1] = 0;
    for (int y = 1; y <= nrows; y++) {
        u64 g = graph->rows[y];
        u64 north = graph->rows[y - 1], south = graph->rows[y + 1];
        u64 east = g >> 1, west = g << 1;
        u64 north_east = north >> 1, north_west = north << 1;
        u64 south_east = south >> 1, south_west = south << 1;
        u64 a = north & ~(west & north_west);
        u64 b = east & ~(north & north_east);
        u64 c = south & ~(east & south_east);
        u64 d = west & ~(south & south_west);
        cuts->rows[y] = g & (((a | b) & (c | d)) | (a & b) | (c & d));
    }
}

/* ---- the chamber tree ---------------------------------------------------------------------------------------- */

/* Inside the tree a square is a cell id, row * 64 + column with the board's row index (1..nrows): its neighbours
 * are id - 64, id + 1, id + 64 and id - 1, a bit test needs no division, and the blocked frame keeps the ids
 * in their rows. */
#define MAX_IDS ((MAX_ROWS + 2) * 64)
#define BIT(board, id) ((board)->rows[(id) >> 6] >> ((id) & 63) & 1)

static int32_t disc[MAX_IDS], low_of[MAX_IDS], parent_of[MAX_IDS], chamber_of[MAX_IDS];
static uint32_t seen[MAX_IDS], generation;
static int32_t order[MAX_IDS];
static int32_t stack_cell[MAX_IDS];
static unsigned char stack_dir[MAX_IDS];
static int32_t above[MAX_IDS];
static const int32_t id_steps[4] = {-64, 1, 64, -1};

static inline int32_t id_of(long index, int stride) { return (int32_t)((index / stride + 1) * 64 + index % stride); }

/* The colour (index parity) of a cell id's square. */
static inline int parity_of(int32_t id, int stride) { return (int)((((id >> 6) - 1) * (long)stride + (id & 63)) & 1); }

/* Chambers of `graph` from `head` (Tarjan's low-links square by square): sets chamber_of[] for every square
 * reached (the head's chamber 0, which holds no square but the head), above[] for every chamber; returns the
 * chamber count and the squares reached in `order` (discovery order, the head first) through *found. */
static int chamber_tree(const Board *graph, int32_t head, int *found) {
    if (++generation == 0) {
        memset(seen, 0, sizeof(seen));
        generation = 1;
    }
    uint32_t now = generation;
    int time = 0, sp = 0;
    seen[head] = now;
    disc[head] = low_of[head] = time;
    parent_of[head] = -1;
    order[time++] = head;
    stack_cell[sp] = head;
    stack_dir[sp++] = 0;
    while (sp) {
        int32_t v = stack_cell[sp - 1];
        int d = stack_dir[sp - 1];
        if (d < 4) {
            stack_dir[sp - 1] = (unsigned char)(d + 1);
            int32_t w = v + id_steps[d];
            if (!BIT(graph, w)) continue;
            if (seen[w] != now) {
                seen[w] = now;
                disc[w] = low_of[w] = time;
                parent_of[w] = v;
                order[time++] = w;
                stack_cell[sp] = w;
                stack_dir[sp++] = 0;
            } else if (w != parent_of[v] && disc[w] < low_of[v]) {
                low_of[v] = disc[w];
            }
        } else {
            sp--;
            int32_t p = parent_of[v];
            if (p >= 0 && low_of[v] < low_of[p]) low_of[p] = low_of[v];
        }
    }
    int chambers = 1;
    above[0] = -1;
    chamber_of[head] = 0;
    for (int i = 1; i < time; i++) {
        int32_t w = order[i], p = parent_of[w];
        if (low_of[w] >= disc[p]) {
            chamber_of[w] = chambers;
            above[chambers++] = chamber_of[p];
        } else {
            chamber_of[w] = chamber_of[p];
        }
    }
    *found = time;
    return chambers;
}

static long long chain_total[MAX_IDS], best_below[MAX_IDS];

/* The best sum of chamber values down one chain from chamber 0 (value[] per chamber, parents before children). */
static long long best_chain(long long *value, int chambers) {
    for (int c = 0; c < chambers; c++) best_below[c] = 0;
    for (int c = chambers - 1; c > 0; c--) {
        long long chain = value[c] + best_below[c];
        if (chain > best_below[above[c]]) best_below[above[c]] = chain;
    }
    return value[0] + best_below[0];
}

static inline int open_neighbours(const Board *free, int32_t id) {
    return (int)(BIT(free, id - 64) + BIT(free, id + 1) + BIT(free, id + 64) + BIT(free, id - 1));
}

static long long degree_sum(const Board *region, const Board *free, int nrows) {
    long long links = 0;
    for (int y = 1; y <= nrows; y++) {
        u64 r = region->rows[y];
        if (!r) continue;
        links += popcount64(r & free->rows[y] >> 1) + popcount64(r & free->rows[y] << 1) +
                 popcount64(r & free->rows[y + 1]) + popcount64(r & free->rows[y - 1]);
    }
    return links;
}

static long long count(const Board *region, int nrows) {
    long long n = 0;
    for (int y = 1; y <= nrows; y++) n += popcount64(region->rows[y]);
    return n;
}

/* tron_ai.chamber_value with parity off. */
static long long chamber_value(const Board *territory, const Board *free, int stride, int nrows, long head,
                               long long edge) {
    static Board graph, cuts;
    memcpy(graph.rows, territory->rows, sizeof(u64) * (size_t)(nrows + 2));
    graph.rows[head / stride + 1] |= (u64)1 << (head % stride);
    local_cuts(&graph, nrows, &cuts);
    int any_cut = 0;
    for (int y = 1; y <= nrows; y++) {
        if (territory->rows[y] & cuts.rows[y]) {
            any_cut = 1;
            break;
        }
    }
    if (!any_cut) return CELL * count(territory, nrows) + edge * degree_sum(territory, free, nrows);
    int found;
    int chambers = chamber_tree(&graph, id_of(head, stride), &found);
    for (int c = 0; c < chambers; c++) chain_total[c] = 0;
    for (int i = 1; i < found; i++) {
        int32_t w = order[i];
        chain_total[chamber_of[w]] += CELL + edge * open_neighbours(free, w);
    }
    return best_chain(chain_total, chambers);
}

/* The colour of a square's index: its parity. */
static inline u64 colour_row(int stride, int y, int parity) {
    const u64 even = 0x5555555555555555ULL;
    int row_parity = (int)(((long)y * stride) & 1);
    return (row_parity ^ parity) ? ~even : even;
}

/* tron_ai.parity_fill. */
static long long parity_fill(const Board *region, int stride, int nrows, long head) {
    long long same = 0, all = 0;
    int parity = (int)(head & 1);
    for (int y = 1; y <= nrows; y++) {
        u64 r = region->rows[y];
        if (!r) continue;
        all += popcount64(r);
        same += popcount64(r & colour_row(stride, y - 1, parity));
    }
    long long other = all - same;
    return 2 * (other < same ? other : same) + (other > same);
}

/* tron_ai.chamber_fill (chains = 0) and tron_ai.chain_fill (chains = 1). */
static long long fill(const Board *free, int stride, int nrows, long head, int chains) {
    static Board region, graph;
    flood(free, stride, nrows, head, &region);
    if (!count(&region, nrows)) return 0;
    memcpy(graph.rows, region.rows, sizeof(u64) * (size_t)(nrows + 2));
    graph.rows[head / stride + 1] |= (u64)1 << (head % stride);
    int found;
    int chambers = chamber_tree(&graph, id_of(head, stride), &found);
    if (!chains) {
        for (int c = 0; c < chambers; c++) chain_total[c] = 0;
        for (int i = 1; i < found; i++) chain_total[chamber_of[order[i]]] += 1;
        long long tree = best_chain(chain_total, chambers);
        long long bound = parity_fill(&region, stride, nrows, head);
        return tree < bound ? tree : bound;
    }
    /* chain_total counts the squares of the head's colour, best_below the others, then totals down each chain. */
    for (int c = 0; c < chambers; c++) chain_total[c] = best_below[c] = 0;
    int parity = (int)(head & 1);
    for (int i = 1; i < found; i++) {
        int32_t w = order[i];
        if (parity_of(w, stride) == parity)
            chain_total[chamber_of[w]] += 1;
        else
            best_below[chamber_of[w]] += 1;
    }
    long long best = 0;
    for (int c = 1; c < chambers; c++) {
        chain_total[c] += chain_total[above[c]];
        best_below[c] += best_below[above[c]];
        long long same = chain_total[c], other = best_below[c];
        long long bound = 2 * (other < same ? other : same) + (other > same);
        if (bound > best) best = bound;
    }
    return best;
}

/* ---- the endgame's greedy ride --------------------------------------------------------------------------- */

/* tron_ai.RING_GROUPS >= 2, by the same rule (built at import): for each 8-bit ring of open squares around a
 * square (N, NE, E, SE, S, SW, W, NW = bits 0-7), whether its open sides form two or more groups. */
static unsigned char ring_cuts[256];

static void build_ring_cuts(void) {
    for (int ring = 0; ring < 256; ring++) {
        int groups = 0;
        for (int start = 0; start < 8; start += 2) {
            if (!(ring >> start & 1)) continue;
            int corner = (start + 7) & 7, side = (start + 6) & 7;
            if ((ring >> corner & 1) && (ring >> side & 1)) continue;
            groups++;
        }
        if (groups == 0 && (ring & 0x55) == 0x55) groups = 1;
        ring_cuts[ring] = groups >= 2;
    }
}

static inline int is_open(const Board *b, long index, int stride) {
    return (int)(b->rows[index / stride + 1] >> (index % stride) & 1);
}

static inline void flip(Board *b, long index, int stride) { b->rows[index / stride + 1] ^= (u64)1 << (index % stride); }

/* tron_ai.ring_of. */
static inline int ring_of(const Board *free, int stride, long at) {
    return is_open(free, at - stride, stride) | is_open(free, at - stride + 1, stride) << 1 |
           is_open(free, at + 1, stride) << 2 | is_open(free, at + stride + 1, stride) << 3 |
           is_open(free, at + stride, stride) << 4 | is_open(free, at + stride - 1, stride) << 5 |
           is_open(free, at - 1, stride) << 6 | is_open(free, at - stride - 1, stride) << 7;
}

/* tron_ai.room_after's room: the best parity bound over the regions the head's open neighbours lead into. */
static long long room_after(const Board *free, int stride, int nrows, long head) {
    static Board seen_board, region;
    memset(seen_board.rows, 0, sizeof(u64) * (size_t)(nrows + 2));
    const long steps[4] = {-stride, 1, stride, -1};
    long long best = 0;
    for (int d = 0; d < 4; d++) {
        long at = head + steps[d];
        if (!is_open(free, at, stride) || is_open(&seen_board, at, stride)) continue;
        flood(free, stride, nrows, at, &region);
        region.rows[at / stride + 1] |= (u64)1 << (at % stride);
        for (int y = 1; y <= nrows; y++) seen_board.rows[y] |= region.rows[y];
        long long room = parity_fill(&region, stride, nrows, head);
        if (room > best) best = room;
    }
    return best;
}

static double monotonic_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static long ride_path[MAX_CELLS];

/* tron_ai.greedy_ride: the ride's squares into ride_path, their number returned; `free` is ridden (changed).
 * With deadline >= 0 the clock (CLOCK_MONOTONIC, time.perf_counter's on Linux) is read every fourth step, as in
 * Python, and *late set when it has passed. */
static int greedy_ride(Board *free, int stride, int nrows, long head, double deadline, int *late) {
    const long steps[4] = {-stride, 1, stride, -1};
    int n = 0;
    *late = 0;
    for (;;) {
        if (deadline >= 0 && (n & 3) == 0 && monotonic_now() > deadline) {
            *late = 1;
            return n;
        }
        long options[4];
        int count = 0;
        for (int d = 0; d < 4; d++)
            if (is_open(free, head + steps[d], stride)) options[count++] = head + steps[d];
        if (!count) return n;
        if (count == 1) {
            head = options[0];
        } else {
            int split_here = ring_cuts[ring_of(free, stride, head)];
            long long best_room = -1;
            int best_exits = 0;
            long pick = options[0];
            for (int i = 0; i < count; i++) {
                long at = options[i];
                flip(free, at, stride);
                int exits = 0;
                for (int d = 0; d < 4; d++) exits += is_open(free, at + steps[d], stride);
                long long room = split_here || ring_cuts[ring_of(free, stride, at)]
                                     ? room_after(free, stride, nrows, at)
                                     : (long long)1 << 20;
                flip(free, at, stride);
                if (room > best_room || (room == best_room && exits < best_exits)) {
                    best_room = room;
                    best_exits = exits;
                    pick = at;
                }
            }
            head = pick;
        }
        flip(free, head, stride);
        ride_path[n++] = head;
    }
}

/* ---- level 5's contact search (session 10) -------------------------------------------------------------------
 *
 * tron_ai._pessimistic_move's search, whole: the core's negamax (search.py: alpha-beta with principal-variation
 * re-searches, a transposition table, hash move then two killers a ply) over tron_ai.Level5Engine's positions
 * (two plies a tick: we commit our target, the opponent answers it knowing it and the tick resolves with tron.py's
 * collision rules), its leaves scored by `territory` (tron_ai.territory_score with chambers), iterative deepening
 * over depths 1, 2, 4, 6, ... until the deadline. Without reductions every completed depth's score is the same
 * negamax value the Python core finds at that depth (tests/ai/test_tron_contact_search.py checks it).
 *
 * Late move reductions (session 16): given `reduction` R > 0, every move after a node's first (the hash move or,
 * failing it, a killer) is searched first with a null window R plies shallower, where the depth left allows it
 * (R + 2 plies or more); only a move that beats alpha there is searched again at the full depth. A depth's value
 * then depends on the move order (search.py's core does not reduce), but a tree searched to its end is still
 * solved exactly: the deepening only stops when no line, reduced or not, met the horizon. The table persists from call
 * to call: entries of earlier calls only order moves (their best move first), as tron_ai's carried main line does,
 * so a depth's value never depends on an earlier search.
 *
 * A root pinned at the draw value (session 15): the opponent sees our move, so on a symmetric board it can often
 * answer every move with a head-on crash or a mirror image, every root move then scores the draw and the first
 * searched would be played. Given a pinned deadline and a tie draw value, the deepening stops at the pinned
 * deadline while the root's score is the draw's; the moves that tie at that score at the last completed depth
 * (`tied_moves`) are then searched again, alone, with a draw worth -tie_draw, until the deadline, and the best of
 * them is played. Whatever the opponent does, the move played keeps the root's value at that depth. */

#define SEARCH_WIN 1000000LL
#define SEARCH_PROVEN (SEARCH_WIN - 1000)
#define SEARCH_INFINITY (2 * SEARCH_WIN)
#define DOOMED 400000LL
#define MAX_PLY 124
#define TABLE_BITS 20
#define CHECK_MASK 63
enum { EXACT_BOUND, LOWER_BOUND, UPPER_BOUND };

typedef struct {
    u64 key;
    int32_t score;
    uint16_t call; /* the search that stored it (entries of earlier ones only order moves) */
    int8_t depth;
    uint8_t move_flag; /* best move (1-4) | bound << 4 */
} Entry; /* 2^20 of them: 16 MB, allocated at the first search */
_Static_assert(sizeof(Entry) == 16, "a table entry is 16 bytes");

static Entry *table;
static uint16_t search_call;
static u64 zobrist[4][MAX_CELLS]; /* an open square, our head, their head, our committed target; made with the table */

typedef struct {
    Board free;
    int stride, nrows, chains, stoppable, aborted, horizon;
    long steps[5];
    long long draw, edge, nodes;
    double deadline;
    uint8_t killers[MAX_PLY + 2][2];
    int reduction; /* plies taken off every move after a node's first (late move reductions, session 16) */
} Search;

static Search S;
static Board search_mine, search_theirs;

static void init_zobrist(void) {
    u64 x = 0x9E3779B97F4A7C15ULL;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < MAX_CELLS; i++) { /* splitmix64 */
            u64 z = (x += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            zobrist[t][i] = z ^ (z >> 31);
        }
}

/* tron_ai.territory_score with chambers on, parity off and no close-split rides: the first head's score. */
static long long territory(const Board *free, int stride, int nrows, long first, long second, int ahead,
                           long long draw, long long edge, int chains, Board *mine, Board *theirs) {
    if (split(free, stride, nrows, first, second, ahead, mine, theirs))
        return chamber_value(mine, free, stride, nrows, first, edge) -
               chamber_value(theirs, free, stride, nrows, second, edge);
    long long lead = fill(free, stride, nrows, first, chains) - fill(free, stride, nrows, second, chains) - ahead;
    if (lead == 0) return draw;
    return (lead > 0 ? APART : -APART) + APART_CELL * lead;
}

/* TronEngine.evaluate: the static score for the side to move (our ply when pending is 0, else theirs). */
static long long evaluate(long ours, long theirs, long pending) {
    int s = S.stride;
    if (!pending)
        return territory(&S.free, s, S.nrows, ours, theirs, 0, -S.draw, S.edge, S.chains, &search_mine,
                         &search_theirs);
    if (!is_open(&S.free, pending, s)) {
        for (int d = 1; d <= 4; d++)
            if (is_open(&S.free, theirs + S.steps[d], s)) return DOOMED;
        return S.draw;
    }
    flip(&S.free, pending, s);
    long long score = territory(&S.free, s, S.nrows, theirs, pending, 1, S.draw, S.edge, S.chains, &search_mine,
                                &search_theirs);
    flip(&S.free, pending, s);
    return score;
}

/* The table slot of a key. */
static inline Entry *slot(u64 key) { return &table[key & (((u64)1 << TABLE_BITS) - 1)]; }

/* The key after a tick that moved our head from `ours` to `pending` and theirs from `theirs` to `target`. */
static inline u64 tick_key(u64 key, long ours, long theirs, long pending, long target) {
    return key ^ zobrist[3][pending] ^ zobrist[0][pending] ^ zobrist[0][target] ^ zobrist[1][ours] ^
           zobrist[1][pending] ^ zobrist[2][theirs] ^ zobrist[2][target];
}

static inline long long to_table(long long score, int ply) {
    return score >= SEARCH_PROVEN ? score + ply : score <= -SEARCH_PROVEN ? score - ply : score;
}

static inline long long from_table(long long score, int ply) {
    return score >= SEARCH_PROVEN ? score - ply : score <= -SEARCH_PROVEN ? score + ply : score;
}

/* The mover's directions onto open squares (NORTH alone for a doomed rider), hash move and killers first. */
static int ordered_moves(long head, int hash_move, int ply, uint8_t *moves) {
    int n = 0, open[5] = {0, 0, 0, 0, 0};
    for (int d = 1; d <= 4; d++) open[d] = is_open(&S.free, head + S.steps[d], S.stride);
    if (!(open[1] | open[2] | open[3] | open[4])) {
        moves[0] = 1;
        return 1;
    }
    int front[3] = {hash_move, S.killers[ply][0], S.killers[ply][1]};
    for (int f = 0; f < 3; f++) {
        int d = front[f];
        if (d >= 1 && d <= 4 && open[d]) {
            moves[n++] = (uint8_t)d;
            open[d] = 0;
        }
    }
    for (int d = 1; d <= 4; d++)
        if (open[d]) moves[n++] = (uint8_t)d;
    return n;
}

static long long negamax(long ours, long theirs, long pending, u64 key, int depth, long long alpha, long long beta,
                         int ply);

/* The score of child `move` of a node, from the node's side: our ply commits a target, theirs resolves the tick
 * (a crash ends the game: scored as the terminal node the core would visit). */
static long long child(long ours, long theirs, long pending, u64 key, int move, int depth, long long alpha,
                       long long beta, int ply) {
    int s = S.stride;
    if (!pending) {
        long target = ours + S.steps[move];
        return -negamax(ours, theirs, target, key ^ zobrist[3][target], depth - 1, -beta, -alpha, ply + 1);
    }
    long target = theirs + S.steps[move];
    int same = pending == target;
    int we_crash = same || !is_open(&S.free, pending, s), they_crash = same || !is_open(&S.free, target, s);
    if (we_crash || they_crash) {
        S.nodes++;
        long long over = we_crash && they_crash ? -S.draw : we_crash ? -SEARCH_WIN : SEARCH_WIN;
        return -from_table(over, ply + 1);
    }
    u64 next = tick_key(key, ours, theirs, pending, target);
    flip(&S.free, pending, s);
    flip(&S.free, target, s);
    long long score = -negamax(pending, target, 0, next, depth - 1, -beta, -alpha, ply + 1);
    flip(&S.free, pending, s);
    flip(&S.free, target, s);
    return score;
}

static long long negamax(long ours, long theirs, long pending, u64 key, int depth, long long alpha, long long beta,
                         int ply) {
    S.nodes++;
    if (S.stoppable && (S.nodes & CHECK_MASK) == 0 && monotonic_now() >= S.deadline) S.aborted = 1;
    if (S.aborted) return 0;
    if (depth <= 0 || ply >= MAX_PLY) {
        S.horizon = 1;
        return evaluate(ours, theirs, pending);
    }
    Entry *entry = slot(key);
    int hash_move = 0;
    if (entry->key == key) {
        hash_move = entry->move_flag & 15;
        if (entry->call == search_call && entry->depth >= depth) {
            long long score = from_table(entry->score, ply);
            int flag = entry->move_flag >> 4;
            if (flag == EXACT_BOUND || (flag == LOWER_BOUND && score >= beta) ||
                (flag == UPPER_BOUND && score <= alpha)) {
                if (-SEARCH_PROVEN < score && score < SEARCH_PROVEN) S.horizon = 1;
                return score;
            }
        }
    }
    uint8_t moves[4];
    int n = ordered_moves(pending ? theirs : ours, hash_move, ply, moves);
    long long original_alpha = alpha, best = -SEARCH_INFINITY;
    int best_move = moves[0];
    for (int i = 0; i < n; i++) {
        long long score;
        if (i == 0) {
            score = child(ours, theirs, pending, key, moves[i], depth, alpha, beta, ply);
        } else {
            /* a later move is first tried `reduction` plies shallower; only one that beats alpha there is
             * searched again to the full depth */
            int reduced = S.reduction && depth >= S.reduction + 2;
            score = child(ours, theirs, pending, key, moves[i], reduced ? depth - S.reduction : depth, alpha,
                          alpha + 1, ply);
            if (reduced && score > alpha && !S.aborted)
                score = child(ours, theirs, pending, key, moves[i], depth, alpha, alpha + 1, ply);
            if (alpha < score && score < beta)
                score = child(ours, theirs, pending, key, moves[i], depth, alpha, beta, ply);
        }
        if (S.aborted) return 0;
        if (score > best) {
            best = score;
            best_move = moves[i];
            if (score > alpha) {
                alpha = score;
                if (alpha >= beta) {
                    uint8_t *slots = S.killers[ply];
                    if (slots[0] != moves[i]) {
                        slots[1] = slots[0];
                        slots[0] = moves[i];
                    }
                    break;
                }
            }
        }
    }
    entry->key = key;
    entry->call = search_call;
    entry->depth = (int8_t)depth;
    int flag = best <= original_alpha ? UPPER_BOUND : best >= beta ? LOWER_BOUND : EXACT_BOUND;
    entry->move_flag = (uint8_t)(best_move | flag << 4);
    entry->score = (int32_t)to_table(best, ply);
    return best;
}

/* The root: every move scored as search.py's `_Tree.root` does with no noise (the first with the full window,
 * the rest null-window first); 0 when done, 1 when the deadline cut it off. */
static int search_root(long ours, long theirs, u64 key, const uint8_t *moves, int n, int depth, long long *scores) {
    long long best = -SEARCH_INFINITY;
    for (int i = 0; i < n; i++) {
        long long floor = best, score;
        if (i == 0) {
            score = child(ours, theirs, 0, key, moves[i], depth, floor, SEARCH_INFINITY, 0);
        } else {
            score = child(ours, theirs, 0, key, moves[i], depth, floor, floor + 1, 0);
            if (score > floor) score = child(ours, theirs, 0, key, moves[i], depth, floor, SEARCH_INFINITY, 0);
        }
        if (S.aborted) return 1;
        scores[i] = score;
        if (score > best) best = score;
    }
    return 0;
}

/* The main line from the root: its best move, then this call's table moves while they are open and the game
 * goes on (the board is restored). */
static int main_line(long ours, long theirs, u64 key, int first, int depth, uint8_t *line) {
    static long undo[2 * MAX_PLY + 4];
    int n = 0, flips = 0, s = S.stride;
    long pending = 0;
    int move = first;
    while (n < depth && n < MAX_PLY) {
        line[n++] = (uint8_t)move;
        if (!pending) {
            pending = ours + S.steps[move];
            key ^= zobrist[3][pending];
        } else {
            long target = theirs + S.steps[move];
            if (pending == target || !is_open(&S.free, pending, s) || !is_open(&S.free, target, s)) break;
            key = tick_key(key, ours, theirs, pending, target);
            flip(&S.free, pending, s);
            flip(&S.free, target, s);
            undo[flips++] = pending;
            undo[flips++] = target;
            ours = pending;
            theirs = target;
            pending = 0;
        }
        Entry *entry = slot(key);
        if (entry->key != key || entry->call != search_call || !(entry->move_flag & 15)) break;
        move = entry->move_flag & 15;
        if (!is_open(&S.free, (pending ? theirs : ours) + S.steps[move], s)) break;
    }
    while (flips) flip(&S.free, undo[--flips], s);
    return n;
}


/* ---- Python entry points ------------------------------------------------------------------------------------ */

static Board free_board, mine_board, theirs_board;

static int get_index(PyObject *arg, long *out) {
    long value = PyLong_AsLong(arg);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (value < 0) {
        PyErr_SetString(PyExc_ValueError, "a square index must not be negative");
        return -1;
    }
    *out = value;
    return 0;
}

/* Sets *nrows for masks `a` (and `b`, if given) and the heads; 1 if the board fits, 0 if not, -1 on error. */
static int prepare(long stride, PyObject *a, PyObject *b, long head1, long head2, int *nrows) {
    int64_t bits = bits_of(a);
    if (bits < 0) return -1;
    if (b) {
        int64_t more = bits_of(b);
        if (more < 0) return -1;
        if (more > bits) bits = more;
    }
    long head = head1 > head2 ? head1 : head2;
    return fits(stride, bits, head, nrows);
}

static PyObject *py_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "split(free, stride, first, second, first_ahead)");
        return NULL;
    }
    long stride, first, second;
    if (get_index(args[1], &stride) || get_index(args[2], &first) || get_index(args[3], &second)) return NULL;
    int ahead = PyObject_IsTrue(args[4]);
    if (ahead < 0) return NULL;
    int nrows;
    int ok = prepare(stride, args[0], NULL, first, second, &nrows);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    if (load(args[0], (int)stride, nrows, &free_board)) return NULL;
    int touching = split(&free_board, (int)stride, nrows, first, second, ahead, &mine_board, &theirs_board);
    PyObject *mine = store(&mine_board, (int)stride, nrows);
    if (!mine) return NULL;
    PyObject *theirs = store(&theirs_board, (int)stride, nrows);
    if (!theirs) {
        Py_DECREF(mine);
        return NULL;
    }
    return Py_BuildValue("(NNO)", mine, theirs, touching ? Py_True : Py_False);
}

static PyObject *py_chamber_value(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "chamber_value(territory, free, stride, head, edge)");
        return NULL;
    }
    long stride, head;
    if (get_index(args[2], &stride) || get_index(args[3], &head)) return NULL;
    long long edge = PyLong_AsLongLong(args[4]);
    if (edge == -1 && PyErr_Occurred()) return NULL;
    int nrows;
    int ok = prepare(stride, args[0], args[1], head, head, &nrows);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    if (load(args[0], (int)stride, nrows, &mine_board) || load(args[1], (int)stride, nrows, &free_board)) return NULL;
    return PyLong_FromLongLong(chamber_value(&mine_board, &free_board, (int)stride, nrows, head, edge));
}

/* The arguments (free, stride, head, ...) of a lone rider's function, `expected` of them: free_board loaded and
 * *nrows set; 1 when done, 0 when the board does not fit (the caller returns NotImplemented), -1 on an error. */
static int lone_rider(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *usage, long *stride,
                      long *head, int *nrows) {
    if (nargs != expected) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (get_index(args[1], stride) || get_index(args[2], head)) return -1;
    int ok = prepare(*stride, args[0], NULL, *head, *head, nrows);
    if (ok <= 0) return ok;
    return load(args[0], (int)*stride, *nrows, &free_board) ? -1 : 1;
}

static PyObject *fill_entry(PyObject *const *args, Py_ssize_t nargs, int chains) {
    long stride, head;
    int nrows;
    int ok = lone_rider(args, nargs, 3, "chamber_fill(free, stride, head) / chain_fill(free, stride, head)", &stride,
                        &head, &nrows);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    return PyLong_FromLongLong(fill(&free_board, (int)stride, nrows, head, chains));
}

static PyObject *py_chamber_fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return fill_entry(args, nargs, 0);
}

static PyObject *py_chain_fill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return fill_entry(args, nargs, 1);
}

static PyObject *py_territory_score(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "territory_score(stride, free, first, second, first_ahead, draw, edge, chains)");
        return NULL;
    }
    long stride, first, second;
    if (get_index(args[0], &stride) || get_index(args[2], &first) || get_index(args[3], &second)) return NULL;
    int ahead = PyObject_IsTrue(args[4]);
    if (ahead < 0) return NULL;
    long long draw = PyLong_AsLongLong(args[5]);
    if (draw == -1 && PyErr_Occurred()) return NULL;
    long long edge = PyLong_AsLongLong(args[6]);
    if (edge == -1 && PyErr_Occurred()) return NULL;
    int chains = PyObject_IsTrue(args[7]);
    if (chains < 0) return NULL;
    int nrows;
    int ok = prepare(stride, args[1], NULL, first, second, &nrows);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    if (load(args[1], (int)stride, nrows, &free_board)) return NULL;
    return PyLong_FromLongLong(territory(&free_board, (int)stride, nrows, first, second, ahead, draw, edge, chains,
                                         &mine_board, &theirs_board));
}

static PyObject *py_greedy_ride(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    long stride, head;
    int nrows;
    int ok = lone_rider(args, nargs, 4, "greedy_ride(free, stride, head, deadline)", &stride, &head, &nrows);
    if (ok < 0) return NULL;
    double deadline = PyFloat_AsDouble(args[3]);
    if (deadline == -1.0 && PyErr_Occurred()) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    int late;
    int n = greedy_ride(&free_board, (int)stride, nrows, head, deadline, &late);
    PyObject *path = PyList_New(n);
    if (!path) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *square = PyLong_FromLong(ride_path[i]);
        if (!square) {
            Py_DECREF(path);
            return NULL;
        }
        PyList_SET_ITEM(path, i, square);
    }
    return Py_BuildValue("(NO)", path, late ? Py_True : Py_False);
}

static PyObject *py_room_after(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    long stride, head;
    int nrows;
    int ok = lone_rider(args, nargs, 3, "room_after(free, stride, head)", &stride, &head, &nrows);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NOTIMPLEMENTED;
    return PyLong_FromLongLong(room_after(&free_board, (int)stride, nrows, head));
}

/* Which of the root's moves, searched to `depth`, score exactly `best` (the first, `moves[0]`, does; the others'
 * scores are upper bounds): each checked with a null window just under `best`; the count, or -1 when the deadline cut it
 * off. */
static int tied_moves(long ours, long theirs, u64 key, const uint8_t *moves, const long long *scores, int n, int depth,
                      long long best, uint8_t *tied) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (scores[i] < best) continue; /* an upper bound (or exact score) below best */
        long long score = i == 0 ? best : child(ours, theirs, 0, key, moves[i], depth, best - 1, best, 0);
        if (S.aborted) return -1;
        if (score >= best) tied[count++] = moves[i];
    }
    return count;
}

/* New table generation: entries of earlier searches only order moves. */
static void next_call(void) {
    memset(S.killers, 0, sizeof(S.killers));
    search_call++;
    if (!search_call) { /* wrapped round: old entries must not pass for this call's */
        memset(table, 0, sizeof(Entry) << TABLE_BITS);
        search_call = 1;
    }
}

static PyObject *py_contact_search(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 9 && nargs != 10 && nargs != 12) {
        PyErr_SetString(PyExc_TypeError,
                        "contact_search(free, stride, ours, theirs, draw_penalty, edge, chains, deadline, max_depth"
                        "[, reduction[, pinned_deadline, tie_draw]])");
        return NULL;
    }
    long reduction = 0;
    if (nargs >= 10) {
        reduction = PyLong_AsLong(args[9]);
        if (reduction == -1 && PyErr_Occurred()) return NULL;
        if (reduction < 0 || reduction > 8) {
            PyErr_SetString(PyExc_ValueError, "reduction must be 0 to 8 plies");
            return NULL;
        }
    }
    int breaks_ties = nargs == 12;
    double pinned_deadline = 0;
    long long tie_draw = 0;
    if (breaks_ties) {
        pinned_deadline = PyFloat_AsDouble(args[10]);
        if (pinned_deadline == -1.0 && PyErr_Occurred()) return NULL;
        tie_draw = PyLong_AsLongLong(args[11]);
        if (tie_draw == -1 && PyErr_Occurred()) return NULL;
    }
    long stride, ours, theirs, max_depth;
    if (get_index(args[1], &stride) || get_index(args[2], &ours) || get_index(args[3], &theirs) ||
        get_index(args[8], &max_depth))
        return NULL;
    long long draw = PyLong_AsLongLong(args[4]);
    if (draw == -1 && PyErr_Occurred()) return NULL;
    long long edge = PyLong_AsLongLong(args[5]);
    if (edge == -1 && PyErr_Occurred()) return NULL;
    int chains = PyObject_IsTrue(args[6]);
    if (chains < 0) return NULL;
    double deadline = PyFloat_AsDouble(args[7]);
    if (deadline == -1.0 && PyErr_Occurred()) return NULL;
    if (max_depth < 1) {
        PyErr_SetString(PyExc_ValueError, "max_depth must be at least 1");
        return NULL;
    }
    if (max_depth > MAX_PLY) max_depth = MAX_PLY;
    int nrows;
    int ok = prepare(stride, args[0], NULL, ours, theirs, &nrows);
    if (ok < 0) return NULL;
    if (!ok || ours == theirs) Py_RETURN_NOTIMPLEMENTED;
    if (!table) {
        table = PyMem_RawCalloc((size_t)1 << TABLE_BITS, sizeof(Entry));
        if (!table) return PyErr_NoMemory();
        init_zobrist();
    }
    if (load(args[0], (int)stride, nrows, &S.free)) return NULL;
    S.stride = (int)stride;
    S.nrows = nrows;
    S.chains = chains;
    S.draw = draw;
    S.edge = edge;
    S.deadline = deadline;
    S.nodes = 0;
    S.aborted = 0;
    S.reduction = (int)reduction;
    S.steps[0] = 0;
    S.steps[1] = -stride;
    S.steps[2] = 1;
    S.steps[3] = stride;
    S.steps[4] = -1;
    next_call();
    u64 key = zobrist[1][ours] ^ zobrist[2][theirs];
    for (int y = 1; y <= nrows; y++)
        for (u64 row = S.free.rows[y]; row; row &= row - 1)
            key ^= zobrist[0][(long)(y - 1) * stride + __builtin_ctzll(row)];
    uint8_t moves[4];
    Entry *entry = slot(key);
    int n = ordered_moves(ours, entry->key == key ? entry->move_flag & 15 : 0, 0, moves);
    long long scores[4], best_score = 0;
    int best = moves[0], done = 0;
    for (long depth = 1; depth <= max_depth; depth = depth == 1 ? 2 : depth + 2) {
        S.stoppable = depth > 1;
        S.horizon = 0;
        long long iteration[4]; /* written only by a completed depth: `scores` keeps the last one's */
        if (search_root(ours, theirs, key, moves, n, (int)depth, iteration)) break;
        done = (int)depth;
        int top = 0;
        for (int i = 1; i < n; i++)
            if (iteration[i] > iteration[top]) top = i;
        best = moves[top];
        best_score = iteration[top];
        /* the next iteration's order: the best first, then by score (stable) */
        uint8_t sorted[4];
        sorted[0] = moves[top];
        scores[0] = iteration[top];
        int k = 1;
        for (int i = 0; i < n; i++) {
            if (i == top) continue;
            int j = k++;
            while (j > 1 && scores[j - 1] < iteration[i]) {
                sorted[j] = sorted[j - 1];
                scores[j] = scores[j - 1];
                j--;
            }
            sorted[j] = moves[i];
            scores[j] = iteration[i];
        }
        memcpy(moves, sorted, (size_t)n);
        if (!S.horizon || best_score >= SEARCH_PROVEN || best_score <= -SEARCH_PROVEN) break;
        /* pinned at the draw value: stop at the pinned deadline, leaving the rest to break the tie */
        S.deadline = breaks_ties && best_score == -draw ? pinned_deadline : deadline;
        if (monotonic_now() >= S.deadline) break;
    }
    int line_depth = done;
    if (breaks_ties && best_score == -draw && n > 1 && done) {
        /* The opponent, seeing our move, can hold every move to a draw: rank the moves that tie at the draw
         * value by a search where draws are worth -tie_draw to us instead, until the whole deadline. */
        S.aborted = 0;
        S.deadline = deadline;
        S.stoppable = 1;
        uint8_t tied[4];
        int count = tied_moves(ours, theirs, key, moves, scores, n, done, best_score, tied);
        if (count > 1) {
            S.draw = tie_draw;
            next_call();
            long long tie_scores[4];
            for (long depth = 1; depth <= max_depth; depth = depth == 1 ? 2 : depth + 2) {
                S.stoppable = depth > 1;
                S.horizon = 0;
                if (search_root(ours, theirs, key, tied, count, (int)depth, tie_scores)) break;
                int top = 0;
                for (int i = 1; i < count; i++)
                    if (tie_scores[i] > tie_scores[top]) top = i;
                best = tied[top];
                line_depth = (int)depth;
                uint8_t first = tied[top]; /* the next iteration searches the best first */
                tied[top] = tied[0];
                tied[0] = first;
                if (!S.horizon || monotonic_now() >= deadline) break;
            }
        }
    }
    uint8_t line[MAX_PLY + 2];
    int length = main_line(ours, theirs, key, best, line_depth, line);
    PyObject *pv = PyTuple_New(length);
    if (!pv) return NULL;
    for (int i = 0; i < length; i++) PyTuple_SET_ITEM(pv, i, PyLong_FromLong(line[i]));
    return Py_BuildValue("(iLiLN)", best, best_score, done, S.nodes, pv);
}

static PyMethodDef methods[] = {
    {"split", (PyCFunction)(void (*)(void))py_split, METH_FASTCALL,
     "split(free, stride, first, second, first_ahead) -> (mine, theirs, touching): tron_ai._split."},
    {"chamber_value", (PyCFunction)(void (*)(void))py_chamber_value, METH_FASTCALL,
     "chamber_value(territory, free, stride, head, edge) -> int: tron_ai.chamber_value with parity off."},
    {"chamber_fill", (PyCFunction)(void (*)(void))py_chamber_fill, METH_FASTCALL,
     "chamber_fill(free, stride, head) -> int: tron_ai.chamber_fill."},
    {"chain_fill", (PyCFunction)(void (*)(void))py_chain_fill, METH_FASTCALL,
     "chain_fill(free, stride, head) -> int: tron_ai.chain_fill."},
    {"territory_score", (PyCFunction)(void (*)(void))py_territory_score, METH_FASTCALL,
     "territory_score(stride, free, first, second, first_ahead, draw, edge, chains) -> int: tron_ai.territory_score "
     "with chambers on, parity off and no close-split rides."},
    {"room_after", (PyCFunction)(void (*)(void))py_room_after, METH_FASTCALL,
     "room_after(free, stride, head) -> int: the room of tron_ai.room_after (without its region)."},
    {"greedy_ride", (PyCFunction)(void (*)(void))py_greedy_ride, METH_FASTCALL,
     "greedy_ride(free, stride, head, deadline) -> (squares, late): tron_ai.greedy_ride; deadline < 0: none."},
    {"contact_search", (PyCFunction)(void (*)(void))py_contact_search, METH_FASTCALL,
     "contact_search(free, stride, ours, theirs, draw_penalty, edge, chains, deadline, max_depth[, pinned_deadline, "
     "tie_draw]) -> (move, score, depth, nodes, main line): level 5's joint-move search in contact "
     "(tron_ai.Level5Engine through search.py); with the last two, a root whose score is the draw value stops "
     "deepening at pinned_deadline and plays the best of the moves that tie there by a search with draws worth "
     "-tie_draw, until the deadline."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_tronkernel",
    "The Tron AI's optional compiled kernel: level 5's leaf evaluation, with exactly tron_ai.py's results.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tronkernel(void) {
    build_ring_cuts();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "CELL", CELL) || PyModule_AddIntConstant(m, "APART", APART) ||
        PyModule_AddIntConstant(m, "APART_CELL", APART_CELL) ||
        PyModule_AddIntConstant(m, "WIN", (long)SEARCH_WIN) || PyModule_AddIntConstant(m, "DOOMED", (long)DOOMED) ||
        PyModule_AddIntConstant(m, "MAX_STRIDE", MAX_STRIDE) || PyModule_AddIntConstant(m, "MAX_ROWS", MAX_ROWS)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
