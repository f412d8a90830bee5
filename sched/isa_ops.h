/* isa_ops.h — named accessors for the integer operands of each opcode, generated from the
 * NUM() lines of isa.def: for NUM(mov, rows, 3)
 *   int64_t inst_mov_rows(const GsInst *in);           reads n[3]
 *   void inst_mov_set_rows(GsInst *in, int64_t v);     writes n[3]
 * Each checks the opcode (a mov accessor on a gemm dies). Outside the ISA module (isa.c and
 * the encoders gtasm.c, gtp.c) instructions are read and built through these, never by
 * GsInst.n[] index. Included by prog.h. */
#ifndef GS_ISA_OPS_H
#define GS_ISA_OPS_H

#include "prog.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NUM(m, name, i)                                                                    \
  static inline int64_t inst_##m##_##name(const GsInst *in) {                              \
    gs_assert(in->op == ISA_OP_##m);                                                       \
    return in->n[i];                                                                       \
  }                                                                                        \
  static inline void inst_##m##_set_##name(GsInst *in, int64_t v) {                        \
    gs_assert(in->op == ISA_OP_##m);                                                       \
    in->n[i] = v;                                                                          \
  }
#include "isa.def"

#ifdef __cplusplus
}
#endif
#endif
