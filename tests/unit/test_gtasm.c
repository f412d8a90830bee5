/* test_gtasm.c — the .gtasm assembler and disassembler: what a hand-written program
 * assembles to (expected fields written out from the source text), every assembler error
 * with its file:line:col, queue names, and the assemble -> disassemble -> assemble round trip
 * (field-by-field equality, not text equality). Run from the repo root (reads tests/cases/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diag_testlib.h"
#include "isa_testlib.h"

static GsArch tiny, hetero;

static int setup(void **state) {
  (void)state;
  tiny_arch(&tiny, 0);
  tiny_arch(&hetero, 1);
  return 0;
}

/* Assemble text; errors go to a buffer returned in *msg (caller frees). */
static GsProgram *assemble(const char *text, const GsArch *a, char **msg) {
  DiagText dt;
  GsDiag *d = diag_text_begin(&dt);
  d->max_errors = 10;
  GsProgram *p = gtasm_parse("t.gtasm", text, a, d);
  char *buf = diag_text_end(&dt);
  if (msg) *msg = buf;
  else free(buf);
  return p;
}

static char *slurp(const char *path) {
  char *t = util_read_file(path, NULL);
  assert_non_null(t);
  return t;
}

/* The hand-written program, checked field by field against its text. */
static void test_basic_fields(void **state) {
  (void)state;
  char *text = slurp("tests/cases/asm/basic.gtasm");
  char *msg;
  GsProgram *p = assemble(text, &tiny, &msg);
  if (!p) fail_msg("%s", msg);
  free(msg);
  /* three .queue directives, in order of first appearance */
  assert_int_equal(p->nqueues, 3);
  assert_int_equal(p->queues[0].cluster, 0);
  assert_int_equal(p->queues[0].core, 0);
  assert_int_equal(p->queues[0].index, Q_DMA_IN);
  assert_int_equal(p->queues[1].index, Q_UNIT0 + 0); /* mme is unit 0 of core kind pe */
  assert_int_equal(p->queues[2].index, Q_DMA_OUT);
  assert_int_equal(p->queues[0].ninsts, 9);
  assert_int_equal(p->queues[1].ninsts, 3);
  assert_int_equal(p->queues[2].ninsts, 5);
  /* 6 regions and 3 tiles declared, ids from 1; id 0 is "none" */
  assert_int_equal(p->nregions, 7);
  assert_int_equal(p->ntiles, 4);
  assert_string_equal(prog_name(p, 0, 4), "x_lb");
  assert_string_equal(prog_name(p, 1, 3), "t_y");
  /* alloc region=r_w level=ddr offset=2048 bytes=2048 init=t_w */
  const GsInst *a = inst(p, 0, 1);
  assert_int_equal(a->op, I_ALLOC);
  assert_int_equal(a->r[0], 2);
  assert_int_equal(a->sub, LVL_DDR);
  assert_int_equal(inst_alloc_offset(a), 2048);
  assert_int_equal(inst_alloc_bytes(a), 2048);
  assert_int_equal(a->t[0], 2);
  /* alloc region=x_lb level=lb cluster=0 core=0 offset=0 bytes=2048 */
  a = inst(p, 0, 3);
  assert_int_equal(a->sub, LVL_LB);
  assert_int_equal(a->r[0], 4);
  /* mov dst=w_lb dst_tile=t_w src=r_w src_tile=t_w bytes=2048 rows=32 src_stride=64 ... */
  const GsInst *m = inst(p, 0, 7);
  assert_int_equal(m->op, I_MOV);
  assert_int_equal(m->r[0], 5);
  assert_int_equal(m->t[0], 2);
  assert_int_equal(m->r[1], 2);
  assert_int_equal(m->t[1], 2);
  assert_int_equal(inst_mov_bytes(m), 2048);
  assert_int_equal(inst_mov_rows(m), 32);
  assert_int_equal(inst_mov_src_stride(m), 64);
  assert_int_equal(inst_mov_dst_stride(m), 64);
  /* signal queue=mme flag=0 -> sub = queue index 2 */
  assert_int_equal(inst(p, 0, 8)->op, I_SIGNAL);
  assert_int_equal(inst(p, 0, 8)->sub, Q_UNIT0);
  /* gemm ... m=32 n=32 k=32 dtype=fp16 */
  const GsInst *g = inst(p, 1, 1);
  assert_int_equal(g->op, I_GEMM);
  assert_int_equal(g->r[0], 6);
  assert_int_equal(g->r[1], 4);
  assert_int_equal(g->r[2], 5);
  assert_int_equal(inst_gemm_m(g), 32);
  assert_int_equal(inst_gemm_n(g), 32);
  assert_int_equal(inst_gemm_k(g), 32);
  assert_int_equal(g->dtype, DT_FP16);
  assert_int_equal(inst(p, 1, 2)->sub, Q_DMA_OUT);
  /* statically valid on tiny */
  GsDiag d;
  diag_init(&d);
  assert_int_equal(prog_check(p, &tiny, &d, "basic.gtasm"), 0);
  prog_free(p);
  free(text);
}

static void roundtrip(const GsProgram *p, const GsArch *a) {
  char *text = disassemble(p, a), *msg;
  GsProgram *q = assemble(text, a, &msg);
  if (!q) fail_msg("re-assembly failed:\n%s\n--- text:\n%s", msg, text);
  assert_same_program(p, q);
  /* and the second disassembly is the same text */
  char *text2 = disassemble(q, a);
  assert_string_equal(text, text2);
  free(text2);
  free(msg);
  free(text);
  prog_free(q);
}

static void test_roundtrip_basic(void **state) {
  (void)state;
  char *text = slurp("tests/cases/asm/basic.gtasm");
  GsProgram *p = assemble(text, &tiny, NULL);
  assert_non_null(p);
  roundtrip(p, &tiny);
  roundtrip(p, NULL); /* without an arch: numeric queue names qN */
  prog_free(p);
  free(text);
}

static void test_roundtrip_every_opcode(void **state) {
  (void)state;
  GsProgram *p = every_opcode_program();
  roundtrip(p, &tiny);
  roundtrip(p, NULL);
  prog_free(p);
}

/* Duplicate names: printed once, later ids by number; the program still round-trips except
 * for the name of the later id, which is dropped (documented). */
static void test_duplicate_names_disasm(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  uint32_t a = prog_new_tile(p, "x"), b = prog_new_tile(p, "x");
  GsInst *in = prog_emit(prog_queue(p, 0, 0, Q_DMA_IN));
  in->op = I_ALLOC;
  in->r[0] = prog_new_region(p, "r");
  in->t[0] = b;
  char *text = disassemble(p, &tiny), *msg;
  GsProgram *q = assemble(text, &tiny, &msg);
  if (!q) fail_msg("%s\n%s", msg, text);
  assert_int_equal(inst(q, 0, 0)->t[0], b);
  assert_string_equal(prog_name(q, 1, a), "x");
  assert_null(prog_name(q, 1, b));
  free(msg);
  free(text);
  prog_free(q);
  prog_free(p);
}

/* Names far longer than any line buffer survive the text (the disassembler never cuts). */
static void test_long_names(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  char *name = malloc(20001);
  for (int i = 0; i < 20000; i++) name[i] = (char)('a' + i % 26);
  name[20000] = 0;
  name[7] = ' '; /* forces quoting */
  GsInst *in = prog_emit(prog_queue(p, 0, 0, Q_DMA_IN));
  in->op = I_MOV;
  in->r[0] = prog_new_region(p, name);
  in->t[0] = prog_new_tile(p, name + 10); /* bare */
  inst_mov_set_bytes(in, 1);
  roundtrip(p, &tiny);
  char small[32];
  gtasm_inst_format(&tiny, p, in, small, sizeof small); /* messages are cut to fit */
  assert_int_equal(strlen(small), sizeof small - 1);
  free(name);
  prog_free(p);
  /* one byte over the limit is an error at the name */
  char *text = malloc(GS_MAX_NAME + 32);
  int n = sprintf(text, "gtasm 1\n.tile ");
  memset(text + n, 'x', GS_MAX_NAME + 1);
  strcpy(text + n + GS_MAX_NAME + 1, "\n");
  char *msg;
  assert_null(assemble(text, &tiny, &msg));
  assert_non_null(strstr(msg, "t.gtasm:2:7: error: a name is at most 65535 bytes"));
  free(msg);
  free(text);
}

static void test_queue_names(void **state) {
  (void)state;
  char buf[64];
  GsQueue q = {.cluster = 0, .core = 1, .index = Q_UNIT0 + 1};
  assert_string_equal(gtasm_queue_name(&tiny, &q, buf, sizeof buf), "c0.k1.vec");
  q = (GsQueue){.cluster = 1, .core = 0, .index = Q_DMA_OUT};
  assert_string_equal(gtasm_queue_name(&tiny, &q, buf, sizeof buf), "c1.k0.dma_out");
  q = (GsQueue){.cluster = 1, .core = -1, .index = 1};
  assert_string_equal(gtasm_queue_name(&tiny, &q, buf, sizeof buf), "c1.dma1");
  q = (GsQueue){.cluster = 0, .core = 1, .index = Q_UNIT0 + 2};
  assert_string_equal(gtasm_queue_name(NULL, &q, buf, sizeof buf), "c0.k1.q4");
  /* hetero: core 2 is the "gemm" kind with units mme, scl */
  q = (GsQueue){.cluster = 0, .core = 2, .index = Q_UNIT0 + 1};
  assert_string_equal(gtasm_queue_name(&hetero, &q, buf, sizeof buf), "c0.k2.scl");
  GsProgram *p = assemble("gtasm 1\n.queue c0.k2.scl\nscalar ops=1\n.queue c0.k2.q2\n"
                          "signal queue=scl\n", &hetero, NULL);
  assert_non_null(p);
  assert_int_equal(p->queues[0].index, Q_UNIT0 + 1);
  assert_int_equal(p->queues[1].index, Q_UNIT0);
  assert_int_equal(inst(p, 1, 0)->sub, Q_UNIT0 + 1);
  prog_free(p);
}

static void test_inst_format(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  GsInst in = {0};
  in.op = I_VEC;
  in.sub = V_SOFTMAX;
  in.r[0] = prog_new_region(p, "y");
  in.t[0] = prog_new_tile(p, "t y");
  in.r[1] = 2; /* unnamed: printed by number */
  prog_reserve_ids(p, 3, 2);
  inst_vec_set_elems(&in, 4096);
  inst_vec_set_param(&in, 128);
  in.dtype = DT_FP32;
  char buf[256];
  gtasm_inst_format(&tiny, p, &in, buf, sizeof buf);
  assert_string_equal(buf, "vec op=softmax dst=y dst_tile=\"t y\" a=2 elems=4096 param=128 dtype=fp32");
  GsInst s = {0};
  s.op = I_SIGNAL;
  s.sub = Q_UNIT0 + 1;
  gtasm_inst_format(&tiny, p, &s, buf, sizeof buf);
  assert_string_equal(buf, "signal queue=vec"); /* every core kind of tiny has vec at q3 */
  gtasm_inst_format(&hetero, p, &s, buf, sizeof buf);
  assert_string_equal(buf, "signal queue=q3"); /* kinds disagree: by number */
  /* a tiny buffer truncates, never overflows */
  char small[8];
  gtasm_inst_format(&tiny, p, &in, small, sizeof small);
  assert_string_equal(small, "vec op=");
  prog_free(p);
}

/* ---- errors: message and position ---- */

typedef struct {
  const char *text;
  const char *expect; /* substring of the diagnostics */
} ErrCase;

static void test_errors(void **state) {
  (void)state;
  static const ErrCase cases[] = {
      {"", "t.gtasm:1:1: error: empty program"},
      {"# only a comment\n", "t.gtasm:1:1: error: empty program"},
      {"gtasm 2\n", "t.gtasm:1:7: error: unsupported gtasm version 2"},
      {"gtasm\n", "t.gtasm:1:6: error: the header needs a format version"},
      {".queue c0.k0.mme\n", "t.gtasm:1:1: error: expected the header 'gtasm 1'"},
      {"gtasm 1\ngemm m=1\n", "t.gtasm:2:1: error: instruction before any .queue"},
      {"gtasm 1\n.queue c0.k0.mme\n  gemmm m=1\n", "t.gtasm:3:3: error: unknown mnemonic 'gemmm'"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m=1 z=3\n", "t.gtasm:3:10: error: gemm has no operand 'z'"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m=1 m=2\n", "t.gtasm:3:10: error: operand 'm' given twice"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m=x1\n", "t.gtasm:3:8: error: m: 'x1' is not an integer"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m=99999999999999999999\n", "t.gtasm:3:8: error: m=99999999999999999999 out of range"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm acc=256\n", "t.gtasm:3:10: error: acc=256 out of range"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m\n", "t.gtasm:3:6: error: expected name=value, found 'm'"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm m=\n", "t.gtasm:3:8: error: operand 'm' has no value"},
      {"gtasm 1\n.queue c0.k0.mme\ngemm dtype=fp8\n", "t.gtasm:3:12: error: unknown dtype 'fp8'"},
      {"gtasm 1\n.queue c0.k0.vec\nvec op=erf\n", "t.gtasm:3:8: error: unknown vector op 'erf'"},
      {"gtasm 1\n.queue c0.k0.vec\nalloc level=l2\n", "t.gtasm:3:13: error: bad level 'l2'"},
      {"gtasm 1\n.queue c0.k0.vec\nbarrier scope=world\n", "t.gtasm:3:15: error: bad scope 'world'"},
      {"gtasm 1\n.queue c0.k0.vec\nfree region=r9\n", "t.gtasm:3:13: error: unknown region 'r9' (declare it with .region)"},
      {"gtasm 1\n.queue c0.k0.vec\nfree region=\"r9\n", "t.gtasm:3:13: error: unterminated string"},
      {"gtasm 1\n.tile a\n.tile a\n", "t.gtasm:3:7: error: duplicate tile name 'a' (already tile 1)"},
      {"gtasm 1\n.region a 4\n.region b 4\n", "t.gtasm:3:11: error: region 4 already has the name 'a'"},
      {"gtasm 1\n.region 5a\n", "t.gtasm:2:9: error: bad name '5a'"},
      {"gtasm 1\n.region \"a\\q\"\n", "t.gtasm:2:11: error: bad escape"},
      {"gtasm 1\n.ntiles 3\n.queue c0.k0.dma_in\nfree region=1\nmov dst_tile=3\n", "t.gtasm:5:14: error: tile id 3 is not below .ntiles 3"},
      {"gtasm 1\n.queue c0.k0.dma_in\nmov src_tile=7\n.ntiles 4\n", "t.gtasm:4:9: error: tile id 7 is already in use"},
      {"gtasm 1\n.queue c0.k0.dma_in\nmov src=-1\n", "t.gtasm:3:9: error: region id -1 out of range"},
      {"gtasm 1\n.queue c2.k0.mme\n", "t.gtasm:2:8: error: queue 'c2.k0.mme': cluster 2 does not exist (arch 'tiny' has 2)"},
      {"gtasm 1\n.queue c0.k2.mme\n", "t.gtasm:2:8: error: queue 'c0.k2.mme': core 2 does not exist (arch 'tiny' has 2 per cluster)"},
      {"gtasm 1\n.queue c0.k0.tpc\n", "t.gtasm:2:14: error: core 0 has no queue 'tpc'"},
      {"gtasm 1\n.queue c0.k0.q5\n", "t.gtasm:2:8: error: queue 'c0.k0.q5': queue index 5 does not exist"},
      {"gtasm 1\n.queue c0.dma2\n", "t.gtasm:2:8: error: queue 'c0.dma2': cluster DMA engine 2 does not exist"},
      {"gtasm 1\n.queue k0.mme\n", "t.gtasm:2:8: error: bad queue name 'k0.mme'"},
      {"gtasm 1\n.queue c0.k0.mme extra\n", "t.gtasm:2:18: error: unexpected 'extra' after .queue"},
      {"gtasm 1\n.queue c0.k0.dma_in\ngemm m=1\n", "t.gtasm:3:1: error: gemm runs on a matrix unit, not on a DMA queue (queue c0.k0.dma_in)"},
      {"gtasm 1\n.queue c0.k0.vec\ngemm m=1\n", "t.gtasm:3:1: error: gemm runs on a matrix unit; unit 'vec' is not one (queue c0.k0.vec)"},
      {"gtasm 1\n.queue c0.k0.mme\nmov bytes=1\n", "t.gtasm:3:1: error: mov runs on a DMA queue"},
      {"gtasm 1\n.queue c0.dma0\nsignal queue=dma_in\n", "t.gtasm:3:14: error: flags are per core"},
      {"gtasm 1\n.queue c0.k0.mme\nsignal queue=tpc\n", "t.gtasm:3:14: error: core 0 has no queue 'tpc'"},
      {"gtasm 1\n.queue c0.k0.mme\nsignal queue=q9\n", "t.gtasm:3:14: error: queue index 9 does not exist"},
      {"gtasm 1\n.quack 3\n", "t.gtasm:2:1: error: unknown directive '.quack'"},
      {"gtasm 1\n.ntiles 0\n", "t.gtasm:2:9: error: bad count '0'"},
      {"gtasm 1\n.ntiles 4 5\n", "t.gtasm:2:11: error: unexpected '5' after .ntiles"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *msg;
    GsProgram *p = assemble(cases[i].text, &tiny, &msg);
    if (p || !strstr(msg, cases[i].expect))
      fail_msg("case %zu: expected \"%s\", got \"%s\"", i, cases[i].expect, msg);
    free(msg);
  }
}

/* The message shows the line and a caret under the column. */
static void test_error_caret(void **state) {
  (void)state;
  char *msg;
  assert_null(assemble("gtasm 1\n.queue c0.k0.mme\n  gemm m=1 q=2\n", &tiny, &msg));
  assert_non_null(strstr(msg, "t.gtasm:3:12: error:"));
  assert_non_null(strstr(msg, "\n    gemm m=1 q=2\n             ^\n"));
  free(msg);
}

/* Several errors are all reported (up to max_errors), and the program is not returned. */
static void test_several_errors(void **state) {
  (void)state;
  char *msg;
  assert_null(assemble("gtasm 1\n.queue c0.k0.mme\nfoo\nbar\ngemm m=1\n", &tiny, &msg));
  assert_non_null(strstr(msg, "t.gtasm:3:1: error: unknown mnemonic 'foo'"));
  assert_non_null(strstr(msg, "t.gtasm:4:1: error: unknown mnemonic 'bar'"));
  free(msg);
}

/* Without an arch: unit names cannot be resolved, numeric ones can. */
static void test_no_arch(void **state) {
  (void)state;
  char *msg;
  assert_null(assemble("gtasm 1\n.queue c0.k0.mme\n", NULL, &msg));
  assert_non_null(strstr(msg, "t.gtasm:2:14: error: unit queue name 'mme' needs an arch"));
  free(msg);
  GsProgram *p = assemble("gtasm 1\n.queue c7.k9.q2\ngemm m=1\nsignal queue=q3\n"
                          ".queue c0.k0.dma_in\nmov bytes=1\n", NULL, &msg);
  if (!p) fail_msg("%s", msg);
  free(msg);
  assert_int_equal(p->queues[0].cluster, 7);
  assert_int_equal(p->queues[0].core, 9);
  assert_int_equal(inst(p, 0, 1)->sub, 3);
  /* the arch-less shape check still applies */
  assert_null(assemble("gtasm 1\n.queue c0.k0.q2\nmov bytes=1\n", NULL, &msg));
  assert_non_null(strstr(msg, "mov runs on a DMA queue"));
  free(msg);
  prog_free(p);
}

/* Operands in any order, hex and negative numbers, comments and CRLF line ends. */
static void test_syntax_details(void **state) {
  (void)state;
  char *msg;
  GsProgram *p = assemble("gtasm 1   # header\r\n"
                          ".tile \"x y\" 5\r\n"
                          "\t.queue c1.k1.dma_out\r\n"
                          "mov bytes=0x10 src_tile=\"x y\" dst_off=-3 # trailing\r\n"
                          ".queue c1.k1.dma_out\n" /* the same queue again: appends */
                          "mov src_tile=5 bytes=1\n", &tiny, &msg);
  if (!p) fail_msg("%s", msg);
  free(msg);
  assert_int_equal(p->nqueues, 1);
  assert_int_equal(p->queues[0].ninsts, 2);
  assert_int_equal(p->ntiles, 6);
  assert_int_equal(inst_mov_bytes(inst(p, 0, 0)), 16);
  assert_int_equal(inst_mov_dst_off(inst(p, 0, 0)), -3);
  assert_int_equal(inst(p, 0, 0)->t[1], 5);
  assert_int_equal(inst(p, 0, 1)->t[1], 5);
  prog_free(p);
}

/* Random mutations of a valid text (fixed seed): the assembler must assemble or report, never
 * crash; whatever it accepts must disassemble and re-assemble to the same program. */
static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void test_fuzz_text(void **state) {
  (void)state;
  char *text = slurp("tests/cases/asm/basic.gtasm");
  size_t len = strlen(text);
  static const char alphabet[] = " \t\n#=\".-0123456789xqabcdefghijklmnopqrstuvwxyz_[]\\";
  char *m = malloc(len + 1);
  int accepted = 0;
  for (int it = 0; it < 4000; it++) {
    memcpy(m, text, len + 1);
    int k = 1 + (int)(next_rand() % 3);
    for (int j = 0; j < k; j++) {
      size_t at = (size_t)(next_rand() % len);
      uint64_t r = next_rand();
      if (r % 4 == 0) m[at] = (char)(1 + next_rand() % 255); /* any byte but NUL */
      else m[at] = alphabet[next_rand() % (sizeof alphabet - 1)];
    }
    char *msg;
    GsProgram *p = assemble(m, &tiny, &msg);
    if (p) {
      accepted++;
      roundtrip(p, &tiny);
      prog_free(p);
    } else {
      assert_non_null(strstr(msg, "t.gtasm:")); /* always located */
    }
    free(msg);
  }
  print_message("# %d of 4000 mutated texts assembled\n", accepted);
  assert_true(accepted > 0);
  free(m);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_basic_fields),
      cmocka_unit_test(test_roundtrip_basic),
      cmocka_unit_test(test_roundtrip_every_opcode),
      cmocka_unit_test(test_duplicate_names_disasm),
      cmocka_unit_test(test_long_names),
      cmocka_unit_test(test_queue_names),
      cmocka_unit_test(test_inst_format),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_error_caret),
      cmocka_unit_test(test_several_errors),
      cmocka_unit_test(test_no_arch),
      cmocka_unit_test(test_syntax_details),
      cmocka_unit_test(test_fuzz_text),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
