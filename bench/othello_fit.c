/* The fit of Othello's pattern evaluation (issue 38, session 2); bench/othello_fit.py compiles and runs it.
 *
 *   othello_fit SPEC DATA OUT EPOCHS RATE DECAY HANDS
 *
 * SPEC (text): "PHASES SHAPES", then for each shape "INSTANCES LENGTH" and one line of LENGTH squares per instance.
 * DATA: 17-byte records <QQb (mover's discs, other side's, final disc difference from the mover's view). The last
 * 5% of the records (the last games played) are held out. HANDS: the hand-weighted evaluation of each record in
 * points, int32 (native order). OUT: the fitted weights in discs, one per line, in
 * server/ai/othello_patterns.py's layout (PHASES blocks: every shape's 3^LENGTH table, then the weights of the
 * mobility difference, the frontier difference, the parity, a constant and the hand evaluation).
 *
 * Normalised least-mean-squares (stochastic gradient descent on the squared error, the step divided by the squared
 * length of the position's feature vector), RATE halved every 3 epochs; a weight a step touches also shrinks by
 * DECAY (L2). Each epoch prints the mean absolute and root-mean-square error in discs on both parts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;

#define MAX_INSTANCES 256
#define EXTRAS 5 /* othello_patterns.EXTRAS: mobility, frontier, parity, constant, hand */
/* The fit sees the features divided by these, so that their steps are like a table entry's; the weights written are
 * per unit of the feature as othello_patterns.evaluate computes it (the hand evaluation in hundreds of points). */
static const double EXTRA_SCALE[EXTRAS] = {8, 8, 1, 1, 8};

static int phases, n_inst, inst_len[MAX_INSTANCES], inst_off[MAX_INSTANCES], inst_sq[MAX_INSTANCES][10], block;

typedef struct {
    u64 P, O;
    int8_t y;
    int32_t hand; /* the hand-weighted evaluation in points */
} Record;

static u64 legal(u64 P, u64 O) {
    const u64 inner = O & 0x7E7E7E7E7E7E7E7EULL;
    u64 moves = 0, empty = ~(P | O), t;
    static const int shifts[4] = {1, 8, 7, 9};
    for (int d = 0; d < 4; d++) {
        int s = shifts[d];
        u64 mask = s == 8 ? O : inner;
        t = mask & (P << s);
        for (int i = 0; i < 5; i++) t |= mask & (t << s);
        moves |= empty & (t << s);
        t = mask & (P >> s);
        for (int i = 0; i < 5; i++) t |= mask & (t >> s);
        moves |= empty & (t >> s);
    }
    return moves;
}

static int phase_of(int empties) {
    int p = (60 - empties) / 10;
    if (p < 0) p = 0;
    return p > phases - 1 ? phases - 1 : p;
}

static u64 neighbours(u64 b) {
    u64 east = b & 0x7F7F7F7F7F7F7F7FULL, west = b & 0xFEFEFEFEFEFEFEFEULL;
    return east << 1 | west >> 1 | b << 8 | b >> 8 | east << 9 | east >> 7 | west << 7 | west >> 9;
}

/* The features of a record: n_inst table entries (value 1 each), then the EXTRAS' weights' indices in f and
 * their (scaled) values in x. */
static void features(const Record *r, int *f, double *x) {
    u64 empty = ~(r->P | r->O), rim = neighbours(empty);
    int empties = __builtin_popcountll(empty);
    int base = phase_of(empties) * block;
    for (int i = 0; i < n_inst; i++) {
        int index = 0;
        for (int k = 0; k < inst_len[i]; k++) {
            int sq = inst_sq[i][k];
            index = index * 3 + ((r->P >> sq & 1) ? 1 : (r->O >> sq & 1) ? 2 : 0);
        }
        f[i] = base + inst_off[i] + index;
    }
    for (int e = 0; e < EXTRAS; e++) f[n_inst + e] = base + block - EXTRAS + e;
    x[0] = __builtin_popcountll(legal(r->P, r->O)) - __builtin_popcountll(legal(r->O, r->P));
    x[1] = __builtin_popcountll(r->O & rim) - __builtin_popcountll(r->P & rim);
    x[2] = empties & 1 ? 1 : -1;
    x[3] = 1;
    x[4] = r->hand / 100.0;
    for (int e = 0; e < EXTRAS; e++) x[e] /= EXTRA_SCALE[e];
}

static double predict(const double *w, const int *f, const double *x) {
    double sum = 0;
    for (int i = 0; i < n_inst; i++) sum += w[f[i]];
    for (int e = 0; e < EXTRAS; e++) sum += w[f[n_inst + e]] * x[e];
    return sum;
}

static void report(const char *what, const double *w, const Record *data, long from, long to) {
    int f[MAX_INSTANCES + EXTRAS];
    double x[EXTRAS], abs_sum = 0, sq_sum = 0, phase_abs[16] = {0};
    long phase_n[16] = {0};
    for (long i = from; i < to; i++) {
        features(&data[i], f, x);
        double err = data[i].y - predict(w, f, x);
        int phase = phase_of(64 - __builtin_popcountll(data[i].P | data[i].O));
        abs_sum += fabs(err);
        sq_sum += err * err;
        phase_abs[phase] += fabs(err);
        phase_n[phase]++;
    }
    long n = to - from > 0 ? to - from : 1;
    printf("  %s: mean abs error %.2f discs, rms %.2f; by phase:", what, abs_sum / n, sqrt(sq_sum / n));
    for (int p = 0; p < phases; p++) printf(" %.1f", phase_n[p] ? phase_abs[p] / phase_n[p] : 0.0);
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: othello_fit SPEC DATA OUT EPOCHS RATE DECAY HANDS\n");
        return 2;
    }
    FILE *spec = fopen(argv[1], "r");
    int shapes;
    if (!spec || fscanf(spec, "%d %d", &phases, &shapes) != 2) return fprintf(stderr, "bad spec\n"), 1;
    int offset = 0;
    for (int s = 0; s < shapes; s++) {
        int count, length;
        if (fscanf(spec, "%d %d", &count, &length) != 2 || n_inst + count > MAX_INSTANCES || length > 10)
            return fprintf(stderr, "bad shape %d\n", s), 1;
        for (int c = 0; c < count; c++, n_inst++) {
            inst_len[n_inst] = length;
            inst_off[n_inst] = offset;
            for (int k = 0; k < length; k++)
                if (fscanf(spec, "%d", &inst_sq[n_inst][k]) != 1) return fprintf(stderr, "bad square\n"), 1;
        }
        int size = 1;
        for (int k = 0; k < length; k++) size *= 3;
        offset += size;
    }
    fclose(spec);
    block = offset + EXTRAS;

    FILE *in = fopen(argv[2], "rb");
    if (!in) return fprintf(stderr, "cannot read %s\n", argv[2]), 1;
    fseek(in, 0, SEEK_END);
    long n = ftell(in) / 17;
    fseek(in, 0, SEEK_SET);
    Record *data = malloc((size_t)n * sizeof(Record));
    unsigned char raw[17];
    for (long i = 0; i < n; i++) {
        if (fread(raw, 1, 17, in) != 17) return fprintf(stderr, "short read\n"), 1;
        memcpy(&data[i].P, raw, 8);
        memcpy(&data[i].O, raw + 8, 8);
        data[i].y = (int8_t)raw[16];
    }
    fclose(in);
    FILE *hands = fopen(argv[7], "rb");
    if (!hands) return fprintf(stderr, "cannot read %s\n", argv[7]), 1;
    for (long i = 0; i < n; i++)
        if (fread(&data[i].hand, 4, 1, hands) != 1) return fprintf(stderr, "short read of the hand scores\n"), 1;
    fclose(hands);
    long train = n - n / 20;
    printf("%ld positions (%ld for the fit, %ld held out), %d instances, %d weights per phase\n", n, train, n - train,
           n_inst, block);

    int epochs = atoi(argv[4]);
    double rate = atof(argv[5]), decay = atof(argv[6]);
    double *w = calloc((size_t)phases * block, sizeof(double));
    long *order = malloc((size_t)train * sizeof(long));
    for (long i = 0; i < train; i++) order[i] = i;
    srand(38);
    int f[MAX_INSTANCES + EXTRAS];
    double x[EXTRAS];
    for (int e = 0; e < epochs; e++) {
        for (long i = train - 1; i > 0; i--) { /* Fisher-Yates with two rand() calls for 30+ bits */
            long j = (long)(((unsigned long)rand() << 15 ^ (unsigned long)rand()) % (unsigned long)(i + 1));
            long t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        double step_rate = rate / (1 << (e / 3));
        for (long k = 0; k < train; k++) {
            const Record *r = &data[order[k]];
            features(r, f, x);
            double err = r->y - predict(w, f, x), norm = n_inst;
            for (int e = 0; e < EXTRAS; e++) norm += x[e] * x[e];
            double step = step_rate * err / norm;
            for (int i = 0; i < n_inst; i++) w[f[i]] += step - decay * w[f[i]];
            for (int e = 0; e < EXTRAS; e++) w[f[n_inst + e]] += step * x[e];
        }
        printf("epoch %d (rate %.4f)\n", e + 1, step_rate);
        report("fit", w, data, 0, train);
        report("held out", w, data, train, n);
        fflush(stdout);
    }
    FILE *out = fopen(argv[3], "w");
    if (!out) return fprintf(stderr, "cannot write %s\n", argv[3]), 1;
    for (long i = 0; i < (long)phases * block; i++) {
        int extra = (int)(i % block) - (block - EXTRAS); /* an extra's weight is per unit, not per scaled unit */
        fprintf(out, "%.6f\n", extra >= 0 ? w[i] / EXTRA_SCALE[extra] : w[i]);
    }
    fclose(out);
    return 0;
}
