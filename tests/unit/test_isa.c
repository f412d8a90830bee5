/* test_isa.c — the tables generated from isa.def and the generated docs/isa.md.
 * Oracles: the operand spec strings themselves (counted and read independently here), the
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

/* Each operand spec has as many operands as '=' signs, and the table keeps their order. */
static void test_operand_table(void **state) {
  (void)state;
  for (int op = 0; op < I_COUNT; op++) {
    const char *spec = isa_operands((GtOpcode)op);
    int eqs = 0;
    for (const char *c = spec; *c; c++) eqs += *c == '=';
    assert_int_equal(isa_operand_count((GtOpcode)op), eqs);
    const char *c = spec;
    for (int i = 0; i < eqs; i++) {
      while (*c == ' ') c++;
      const GtOperand *o = isa_operand((GtOpcode)op, i);
      size_t n = strlen(o->name);
      assert_memory_equal(c, o->name, n);
      assert_int_equal(c[n], '=');
      c = strchr(c, ' ');
      if (!c) c = spec + strlen(spec);
    }
  }
  /* a few spelled out from isa.def */
  const GtOperand *o = isa_operand(I_MOV, 3);
  assert_string_equal(o->name, "src_tile");
  assert_int_equal(o->field, OPF_TILE);
  assert_int_equal(o->index, 1);
  o = isa_operand(I_VEC, 0);
  assert_string_equal(o->name, "op");
  assert_int_equal(o->kind, OPK_VOP);
  o = isa_operand(I_GEMM, 10);
  assert_string_equal(o->name, "acc");
  assert_int_equal(o->field, OPF_FLAGS);
  o = isa_operand(I_ALLOC, 1);
  assert_int_equal(o->kind, OPK_LEVEL);
  assert_int_equal(isa_operand(I_SIGNAL, 0)->kind, OPK_QUEUE);
  assert_int_equal(isa_operand(I_BARRIER, 0)->kind, OPK_SCOPE);
}

/* inst_set then inst_get gives the value back, and touches only that operand's field. */
static void test_inst_get_set(void **state) {
  (void)state;
  for (int op = 0; op < I_COUNT; op++)
    for (int i = 0; i < isa_operand_count((GtOpcode)op); i++) {
      const GtOperand *o = isa_operand((GtOpcode)op, i);
      GtInst in, zero;
      memset(&in, 0, sizeof in);
      memset(&zero, 0, sizeof zero);
      int64_t v = o->field == OPF_NUM ? -123456789012345 : o->field <= OPF_TILE ? 4000000000 : 200;
      inst_set(&in, o, v);
      assert_int_equal(inst_get(&in, o), v);
      for (int j = 0; j < isa_operand_count((GtOpcode)op); j++)
        if (j != i) assert_int_equal(inst_get(&in, isa_operand((GtOpcode)op, j)), 0);
      inst_set(&in, o, 0);
      assert_memory_equal(&in, &zero, sizeof in);
    }
}

static void test_names_unique(void **state) {
  (void)state;
  for (int a = 0; a < I_COUNT; a++)
    for (int b = a + 1; b < I_COUNT; b++)
      assert_string_not_equal(isa_mnemonic((GtOpcode)a), isa_mnemonic((GtOpcode)b));
  for (int a = 0; a < V_COUNT; a++)
    for (int b = a + 1; b < V_COUNT; b++)
      assert_string_not_equal(vop_name((GtVop)a), vop_name((GtVop)b));
  assert_string_equal(isa_mnemonic(I_COUNT), "?");
  assert_string_equal(vop_name(V_COUNT), "?");
  assert_string_equal(level_name(LVL_GB), "gb");
  assert_string_equal(scope_name(SCOPE_CHIP), "chip");
  assert_string_equal(isa_engine_name(E_MATRIX), "matrix");
  /* softmax: 2 simple + 1 div + 1 transc + 2 reduce passes (isa.def) */
  assert_int_equal(vop_passes(V_SOFTMAX, VC_SIMPLE), 2);
  assert_int_equal(vop_passes(V_SOFTMAX, VC_REDUCE), 2);
  assert_int_equal(vop_inputs(V_GLU), 2);
}

static void test_program_helpers(void **state) {
  (void)state;
  GtProgram *p = program_new();
  assert_int_equal(p->nregions, 1);
  program_reserve_ids(p, 40, 3);
  assert_int_equal(p->nregions, 40);
  assert_int_equal(p->ntiles, 3);
  program_set_name(p, 0, 39, "last");
  assert_int_equal(program_new_region(p, "next"), 40);
  assert_string_equal(p->region_names[39], "last");
  assert_string_equal(p->region_names[40], "next");
  assert_null(p->region_names[38]);
  program_set_name(p, 1, 2, "t");
  program_set_name(p, 1, 2, "u"); /* replaces */
  assert_string_equal(p->tile_names[2], "u");
  program_reserve_ids(p, 2, 2); /* never shrinks */
  assert_int_equal(p->nregions, 41);
  for (int i = 0; i < 70; i++) program_new_tile(p, i % 2 ? "x" : NULL);
  assert_int_equal(p->ntiles, 73);
  assert_string_equal(p->tile_names[72], "x");
  program_queue(p, 0, 0, 1);
  program_emit(program_queue(p, 1, -1, 0));
  program_emit(program_queue(p, 1, -1, 0));
  assert_int_equal(program_find_queue(p, 1, -1, 0), 1);
  assert_int_equal(program_find_queue(p, 1, 0, 0), -1);
  assert_int_equal(program_ninsts(p), 2);
  program_free(p);
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
    snprintf(want, sizeof want, "### `%s` (opcode %d, engine %s)", isa_mnemonic((GtOpcode)op),
             op, isa_engine_name(isa_engine((GtOpcode)op)));
    assert_non_null(strstr(doc, want));
  }
  for (int v = 0; v < V_COUNT; v++) {
    snprintf(want, sizeof want, "| %d | `%s` | %d |", v, vop_name((GtVop)v), vop_inputs((GtVop)v));
    assert_non_null(strstr(doc, want));
  }
  assert_non_null(strstr(doc, "timing.md"));
  snprintf(want, sizeof want, "Instruction word (%d bytes", GTP_INST_BYTES);
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
  GtArch tiny;
  tiny_arch(&tiny, 0);
  GtDiag d;
  diag_init(&d);
  GtProgram *p = gtasm_parse("doc-example", b, &tiny, &d);
  assert_non_null(p);
  assert_int_equal(program_check(p, &tiny, &d, "doc-example"), 0);
  assert_int_equal(program_ninsts(p), 7);
  program_free(p);
  free(doc);
}

/* docs/isa.md is the generated text (refresh: build/gtsim --isa-doc > docs/isa.md). */
static void test_doc_fresh(void **state) {
  (void)state;
  char *doc = generated_doc();
  char *file = read_file("docs/isa.md", NULL);
  if (!file) fail_msg("docs/isa.md missing (run from the repo root)");
  if (strcmp(doc, file) != 0)
    fail_msg("docs/isa.md differs from the generated text; refresh with "
             "`build/gtsim --isa-doc > docs/isa.md`");
  free(file);
  free(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_operand_table), cmocka_unit_test(test_inst_get_set),
      cmocka_unit_test(test_names_unique),  cmocka_unit_test(test_program_helpers),
      cmocka_unit_test(test_doc_content),   cmocka_unit_test(test_doc_example),
      cmocka_unit_test(test_doc_fresh),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
