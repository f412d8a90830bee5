/* test_isa.c — the tables generated from isa.def and the generated docs/isa.md.
 * Oracles: the operand specs written out below (as the assembly manual spells them), the
 * field list in isa.def's header comment, and the checked-in docs/isa.md (regression: it must
 * equal `gtsim --isa-doc`; refresh with `build/gtsim --isa-doc > docs/isa.md`).
 * Run from the repo root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isa_testlib.h"

/* An opcode's operands as "name=field ...", fields as in isa.def's header (r0, n3, sub). */
static void spec_of(GsOpcode op, char *buf, size_t n) {
  static const char *const field[] = {"r", "t", "n", "sub", "dtype", "flags"};
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < isa_operand_count(op); i++) {
    const GsOperand *o = isa_operand(op, i);
    len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", i ? " " : "", o->name, field[o->field]);
    if (o->field <= OPF_NUM) len += (size_t)snprintf(buf + len, n - len, "%d", o->index);
    assert_true(len < n);
  }
}

/* The operand table, in assembly order, field by field. */
static void test_operand_table(void **state) {
  (void)state;
  static const char *const want[I_COUNT] = {
      [I_ALLOC] = "region=r0 level=sub cluster=n0 core=n1 offset=n2 bytes=n3 init=t0 final=t1",
      [I_FREE] = "region=r0",
      [I_MOV] = "dst=r0 dst_tile=t0 src=r1 src_tile=t1 bytes=n0 dst_off=n1 src_off=n2 rows=n3 "
                "src_stride=n4 dst_stride=n5 planes=n6 src_pstride=n7 dst_pstride=n8 idx=r2 "
                "idx_tile=t2 idx_bytes=n9",
      [I_GEMM] = "dst=r0 dst_tile=t0 a=r1 a_tile=t1 b=r2 b_tile=t2 m=n0 n=n1 k=n2 dtype=dtype "
                 "elem_bytes=n3 acc=flags a_elems=n4 reps=n5",
      [I_VEC] = "op=sub dst=r0 dst_tile=t0 dst_off=n4 a=r1 a_tile=t1 a_elems=n2 b=r2 b_tile=t2 "
                "b_elems=n3 elems=n0 param=n1 dtype=dtype elem_bytes=n5",
      [I_SCALAR] = "ops=n0",
      [I_SIGNAL] = "queue=sub flag=n0",
      [I_WAIT] = "flag=n0",
      [I_BARRIER] = "scope=sub id=n0 count=n1",
      [I_SEMPOST] = "scope=sub id=n0",
      [I_SEMWAIT] = "scope=sub id=n0",
  };
  char spec[512];
  for (int op = 0; op < I_COUNT; op++) {
    spec_of((GsOpcode)op, spec, sizeof spec);
    assert_non_null(want[op]);
    assert_string_equal(spec, want[op]);
  }
  const GsOperand *o = isa_operand(I_VEC, 0);
  assert_string_equal(o->name, "op");
  assert_int_equal(o->kind, OPK_VOP);
  assert_int_equal(isa_operand(I_GEMM, 10)->kind, OPK_INT);
  assert_int_equal(isa_operand(I_GEMM, 9)->kind, OPK_DTYPE);
  assert_int_equal(isa_operand(I_MOV, 3)->kind, OPK_TILE);
  assert_int_equal(isa_operand(I_MOV, 2)->kind, OPK_REGION);
  assert_int_equal(isa_operand(I_ALLOC, 1)->kind, OPK_LEVEL);
  assert_int_equal(isa_operand(I_SIGNAL, 0)->kind, OPK_QUEUE);
  assert_int_equal(isa_operand(I_BARRIER, 0)->kind, OPK_SCOPE);
}

/* The accessors isa_ops.h generates for NUM(m, name, i) read and write the field that the
 * operand table gives operand `name` of opcode m, and nothing else. */
static void check_accessor(const char *mnemonic, const char *name, int64_t (*get)(const GsInst *),
                           void (*set)(GsInst *, int64_t)) {
  int op = 0;
  while (op < I_COUNT && strcmp(isa_mnemonic((GsOpcode)op), mnemonic) != 0) op++;
  assert_true(op < I_COUNT);
  const GsOperand *o = NULL;
  for (int i = 0; i < isa_operand_count((GsOpcode)op); i++)
    if (strcmp(isa_operand((GsOpcode)op, i)->name, name) == 0) o = isa_operand((GsOpcode)op, i);
  assert_non_null(o);
  assert_int_equal(o->field, OPF_NUM);
  GsInst in, zero;
  memset(&in, 0, sizeof in);
  in.op = (uint8_t)op;
  zero = in;
  set(&in, -1234567890123);
  assert_int_equal(isa_inst_get(&in, o), -1234567890123);
  isa_inst_set(&in, o, 77);
  assert_int_equal(get(&in), 77);
  set(&in, 0);
  assert_memory_equal(&in, &zero, sizeof in);
}

static void test_named_accessors(void **state) {
  (void)state;
  int n = 0, want = 0;
#define NUM(m, name, i) check_accessor(#m, #name, inst_##m##_##name, inst_##m##_set_##name), n++;
#include "isa.def"
  for (int op = 0; op < I_COUNT; op++)
    for (int i = 0; i < isa_operand_count((GsOpcode)op); i++)
      want += isa_operand((GsOpcode)op, i)->field == OPF_NUM;
  assert_int_equal(n, want);
}

/* isa_inst_set then isa_inst_get gives the value back, and touches only that operand's field. */
static void test_inst_get_set(void **state) {
  (void)state;
  for (int op = 0; op < I_COUNT; op++)
    for (int i = 0; i < isa_operand_count((GsOpcode)op); i++) {
      const GsOperand *o = isa_operand((GsOpcode)op, i);
      GsInst in, zero;
      memset(&in, 0, sizeof in);
      memset(&zero, 0, sizeof zero);
      int64_t v = o->field == OPF_NUM ? -123456789012345 : o->field <= OPF_TILE ? 4000000000 : 200;
      isa_inst_set(&in, o, v);
      assert_int_equal(isa_inst_get(&in, o), v);
      for (int j = 0; j < isa_operand_count((GsOpcode)op); j++)
        if (j != i) assert_int_equal(isa_inst_get(&in, isa_operand((GsOpcode)op, j)), 0);
      isa_inst_set(&in, o, 0);
      assert_memory_equal(&in, &zero, sizeof in);
    }
}

static void test_names_unique(void **state) {
  (void)state;
  for (int a = 0; a < I_COUNT; a++)
    for (int b = a + 1; b < I_COUNT; b++)
      assert_string_not_equal(isa_mnemonic((GsOpcode)a), isa_mnemonic((GsOpcode)b));
  for (int a = 0; a < V_COUNT; a++)
    for (int b = a + 1; b < V_COUNT; b++)
      assert_string_not_equal(isa_vop_name((GsVop)a), isa_vop_name((GsVop)b));
  assert_string_equal(isa_mnemonic(I_COUNT), "?");
  assert_string_equal(isa_vop_name(V_COUNT), "?");
  assert_string_equal(isa_level_name(LVL_GB), "gb");
  assert_string_equal(isa_scope_name(SCOPE_CHIP), "chip");
  assert_string_equal(isa_engine_name(E_MATRIX), "matrix");
  /* softmax: 2 simple + 1 div + 1 transc + 2 reduce passes (isa.def) */
  assert_int_equal(isa_vop_passes(V_SOFTMAX, VC_SIMPLE), 2);
  assert_int_equal(isa_vop_passes(V_SOFTMAX, VC_REDUCE), 2);
  assert_int_equal(isa_vop_inputs(V_GLU), 2);
}

static void test_program_helpers(void **state) {
  (void)state;
  GsProgram *p = prog_new();
  assert_int_equal(p->nregions, 1);
  prog_reserve_ids(p, 40, 3);
  assert_int_equal(p->nregions, 40);
  assert_int_equal(p->ntiles, 3);
  prog_set_name(p, 0, 39, "last");
  assert_int_equal(prog_new_region(p, "next"), 40);
  assert_string_equal(prog_name(p, 0, 39), "last");
  assert_string_equal(prog_name(p, 0, 40), "next");
  assert_null(prog_name(p, 0, 38));
  prog_set_name(p, 1, 2, "t");
  prog_set_name(p, 1, 2, "u"); /* replaces */
  assert_string_equal(prog_name(p, 1, 2), "u");
  prog_reserve_ids(p, 2, 2); /* never shrinks */
  assert_int_equal(p->nregions, 41);
  for (int i = 0; i < 70; i++) prog_new_tile(p, i % 2 ? "x" : NULL);
  assert_int_equal(p->ntiles, 73);
  assert_string_equal(prog_name(p, 1, 72), "x");
  prog_queue(p, 0, 0, 1);
  prog_emit(prog_queue(p, 1, -1, 0));
  prog_emit(prog_queue(p, 1, -1, 0));
  assert_int_equal(prog_find_queue(p, 1, -1, 0), 1);
  assert_int_equal(prog_find_queue(p, 1, 0, 0), -1);
  assert_int_equal(prog_ninsts(p), 2);
  prog_free(p);
}

static char *generated_doc(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  isa_write_doc(m);
  fclose(m);
  char *copy = strdup(buf); /* a plain heap string (gcc warns about memstream buffers) */
  free(buf);
  return copy;
}

/* Every opcode and every VOP has its section/row. */
static void test_doc_content(void **state) {
  (void)state;
  char *doc = generated_doc(), want[128];
  for (int op = 0; op < I_COUNT; op++) {
    snprintf(want, sizeof want, "### `%s` (opcode %d, engine %s)", isa_mnemonic((GsOpcode)op),
             op, isa_engine_name(isa_engine((GsOpcode)op)));
    assert_non_null(strstr(doc, want));
  }
  for (int v = 0; v < V_COUNT; v++) {
    snprintf(want, sizeof want, "| %d | `%s` | %d |", v, isa_vop_name((GsVop)v),
             isa_vop_inputs((GsVop)v));
    assert_non_null(strstr(doc, want));
  }
  assert_non_null(strstr(doc, "timing.md"));
  snprintf(want, sizeof want, "nqueues entries of %d bytes", GTP_QUEUE3_BYTES);
  assert_non_null(strstr(doc, want));
  snprintf(want, sizeof want, "instruction as a word of %d bytes", GTP_INST_BYTES);
  assert_non_null(strstr(doc, want));
  free(doc);
}

/* The example in the doc assembles and passes the static checks on tiny. */
static void test_doc_example(void **state) {
  (void)state;
  char *doc = generated_doc();
  char *b = strstr(doc, "```gtasm\n");
  assert_non_null(b);
  b += 9;
  char *e = strstr(b, "```\n");
  assert_non_null(e);
  *e = 0;
  GsArch tiny;
  tiny_arch(&tiny, 0);
  GsDiag d;
  diag_init(&d);
  GsProgram *p = gtasm_parse("doc-example", b, &tiny, &d);
  assert_non_null(p);
  assert_int_equal(prog_check(p, &tiny, &d, "doc-example"), 0);
  assert_int_equal(prog_ninsts(p), 7);
  prog_free(p);
  free(doc);
}

/* docs/isa.md is the generated text (refresh: build/gtsim --isa-doc > docs/isa.md). */
static void test_doc_fresh(void **state) {
  (void)state;
  char *doc = generated_doc();
  char *file = util_read_file("docs/isa.md", NULL);
  if (!file) fail_msg("docs/isa.md missing (run from the repo root)");
  if (strcmp(doc, file) != 0)
    fail_msg("docs/isa.md differs from the generated text; refresh with "
             "`build/gtsim --isa-doc > docs/isa.md`");
  free(file);
  free(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_operand_table), cmocka_unit_test(test_named_accessors),
      cmocka_unit_test(test_inst_get_set),  cmocka_unit_test(test_names_unique),
      cmocka_unit_test(test_program_helpers), cmocka_unit_test(test_doc_content),
      cmocka_unit_test(test_doc_example),   cmocka_unit_test(test_doc_fresh),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
