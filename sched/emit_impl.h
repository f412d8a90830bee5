/* emit_impl.h — internals shared by emit.c (memory map, kernels over clusters and cores)
 * and emit_tiles.c (one kernel's streams on one core). Not for other modules. The memory map's
 * DDR and each core's tile regions are ivl.h allocators used in program order (ivl_take). */
#ifndef GS_LOWER_EMIT_H
#define GS_LOWER_EMIT_H

#include "emit.h"
#include "ivl.h"
#include "lower.h"

enum { F_AFREE = 0, F_WFREE = 1, F_RFREE = 2 };   /* flags of dma_in */
enum { F_READY = 0, F_OFREE = 1, F_MID = 2 };     /* flags of the head / tail unit queue */
enum { F_OREADY = 0 };                            /* flag of dma_out */
enum { MAX_PARTS = GS_MAX_OPERANDS };

/* A piece of a tensor: the part of it one core writes, a view (lower.h GsView: rows x a range
 * of bytes of every row, all of each row when the kernel does not split columns), and where it
 * lies. In DDR and GB a piece lies in place in a region over its rows [v.lo, v.hi), which the
 * pieces of those rows share with one tile (the cores write disjoint bytes of it, so a reader of
 * whole rows reads them with one mov, and the simulator still checks that every byte it reads was
 * written, and before it); in LB a piece is compact in its core's own region. Each core's piece
 * of a kernel output is its own, so no two queues ever write one byte of a region in a kernel. */
typedef struct {
  GsView v;                     /* its bytes of the tensor (per iteration) */
  int64_t base;                 /* region offset of its first byte, v.lo + v.b0 */
  int64_t rpitch;               /* region bytes from one of its rows to the next: v.pitch in
                                   place, v.b1 - v.b0 compact */
  int owner;                    /* it allocates and frees the region (one piece per region) */
  uint32_t reg, tile;
  int level;                    /* GsLevel of the region */
  int slice;                    /* graphturbo: the slice it belongs to (-1: none) */
  int core;                     /* graphturbo LB pieces: the core whose LB holds it */
  uint32_t dreg, dtile;         /* graphturbo DDR pieces written through the GB (a drain): the
                                   GB region its writer stores into (in place over its rows, as
                                   its DDR region) and that tile; 0: none */
  uint32_t areg, atile;         /* graphturbo DDR pieces loaded ahead: the GB copy its readers
                                   read (in place over its rows) and that tile; 0: none */
} Piece;
typedef struct {
  int n, room;
  Piece *p;
} PieceList;

/* A kernel's weights staged in a cluster's GB: one region per chunk (GsKernel.w_chunks, or one
 * for all of them), the tile each holds; n = 0: none. kept: the plan keeps them in the GB to the
 * run's end (GsLowered.w_kept), nobody frees them; ready: staged before this kernel started (an
 * earlier iteration's), so no core waits for a staging. */
typedef struct {
  uint32_t reg[GT_STAGE_CHUNKS], tile[GT_STAGE_CHUNKS];
  int n;
  int kept, ready;
} StagedW;

struct GsEmitState {
  GsArena *arena;               /* everything below but the allocators' storage */
  GsProgram *p;
  GsEmitTally *tally;           /* the accounting sink */
  int active_cores[GS_MAX_CORE_KINDS]; /* cores per cluster with queues, per kind */
  int ahead_kernels;            /* room of `ahead` in kernels */
  int nclusters, ncores;        /* cores per cluster */
  int qpc;                      /* queue slots per core: 2 + most units of a kind */
  int *qidx;                    /* [cluster][core][slot] -> queue index, -1 if none */
  int *cdma;                    /* [cluster] -> cluster DMA queue 0 index, -1 if none */
  int *ddma;                    /* [cluster] -> cluster DMA queue 1 (graphturbo drains), -1 */
  unsigned char *qsem;          /* [queue] hand-overs through semaphores (cores without DMA) */
  uint8_t *pend_wait;           /* [queue][2] 1 + the flags waited on that the queue's next
                                   instruction carries (its `wait`, `wait2`), 0: none */
  GsInst **last;                /* [queue] its last instruction, still staged (prog_emit): a
                                   signal that follows it is folded into it, the same gemm
                                   again is one more of its reps; NULL: none yet */
  int64_t *fold_at;             /* [queue] its instruction count when a folded signal or a
                                   gemm's reps last changed its last instruction, -1: never
                                   (emit_copy.c: a copied run's instructions must not change) */
  int nparticipants;
  GsIvl ddr_ivl;                /* DDR in program order (ivl_take): the whole run's areas
                                   (id -1), an iteration's tensor areas (id: the tensor) */
  uint32_t *w_reg, *w_tile;     /* per op: weight region in DDR */
  PieceList *ddr;               /* per tensor: its DDR pieces in this iteration */
  PieceList *gb;                /* per tensor × cluster: its GB pieces */
  uint32_t *io_reg, *io_tile;   /* per tensor: whole-batch region of a graph input */
  int64_t *out_off;             /* per tensor: offset + 1 of a graph output's whole-batch area
                                   in DDR, 0: not an output */
  StagedW *gbw;                 /* per cluster: staged weights of the current kernel */
  StagedW *ahead;               /* [kernel][cluster]: weights staged ahead (ahead_kernels) */
  StagedW *kept;                /* [op][cluster]: weights the plan keeps in the GB, once staged
                                   (NULL when it keeps none) */
  PieceList *sl;                /* graphturbo, per tensor × cluster: pieces of its live slices
                                   (that cluster's LB/GB ones and every cluster's DDR ones) */
  int64_t *ddr_area;            /* graphturbo, per tensor: this iteration's DDR area, -1: none */
  int *qcl_barrier;             /* scratch: [cluster] -> queues that join its barriers */
  GsIvl *lb_ivl;                /* [cluster][core]: the tile regions of the core's kernel (id:
                                   the region), freed at the next kernel's start */
  const GsKernel *need_of;      /* the kernel whose lower_tile_need `need` holds (every core of
                                   it checks its regions against it); NULL: none this iteration */
  int64_t need;
};

typedef struct {
  const GsLowered *l;
  const GsArch *a;
  const GsGraph *g;
  GsProgram *p;
  struct GsEmitState *s;
  int64_t sample0;              /* first sample of this iteration in the whole batch */
  int iteration;
} Emit;

typedef struct {
  Emit *e;
  int c, core, kind, qin;
  GsIvl *ivl;                   /* the core's lb_ivl */
  int64_t cap, gb_base;         /* the kernel's tile budget; where a core without LB starts */
  int level;
} LbAlloc;

int emit_core_q(Emit *e, int c, int core, int slot);
/* The accounting sink: bytes of DDR level moved by task `task` (a kernel index); others are
 * not counted. emit_task_of: kernel k's index in the plan. */
void emit_count_ddr(Emit *e, int task, int level, int64_t bytes, int write);
int emit_task_of(const Emit *e, const GsKernel *k);
/* Semaphore ids: SEM_STAGE_BASE + (kernel × GT_STAGE_CHUNKS + chunk) × 65536 + core (staged
 * weights, emit_stage_sem); the
 * graphturbo drains and loads ahead use 2^32 and 2^33 up (emit_slices.c); flags emulated
 * for cores without DMA 2^20 up (emit.c). */
#define SEM_STAGE_BASE ((int64_t)1 << 36)
int64_t emit_stage_sem(const Emit *e, const GsKernel *k, int core, int chunk);
/* Chunk ch of kernel k's staged weights: its first column tile's first weight byte (*off) and
 * its bytes; emit_stage_chunk_of: the chunk holding the column tile that starts at column c0. */
void emit_stage_chunk(const GsGraph *g, const GsKernel *k, int ch, int64_t *off, int64_t *bytes);
int emit_stage_chunk_of(const GsKernel *k, int64_t c0);
int64_t emit_share(const Emit *e);
GsInst *emit_inst(Emit *e, int qi, GsOpcode op);
/* An alloc instruction (returned so that a caller can mark a program output: t[1], `final`). */
GsInst *emit_alloc(Emit *e, int qi, uint32_t r, GsLevel lvl, int cl, int core, int64_t off,
                   int64_t bytes, uint32_t init);
void emit_free_region(Emit *e, int qi, uint32_t r);
/* A hand-over between queues. A flag between queues of one core is folded into an
 * instruction where the order allows (GsInst's wait and signal): a wait into the queue's next
 * instruction, a signal into its last one when that has none and no wait is pending; else it
 * is an instruction of its own. emit_flush writes out the waits still pending. */
void emit_signal(Emit *e, int from, int to, int to_slot, int flag);
void emit_wait(Emit *e, int qi, int flag);
void emit_flush(Emit *e);
/* A complete gemm g (no wait or signal of its own) onto queue qi: one more rep of the queue's
 * last instruction when that is the same gemm (isa.def `reps`: a conv's gemms per filter tap),
 * carries no signal and no wait is pending; else an instruction of its own. */
void emit_gemm(Emit *e, int qi, const GsInst *g);
/* A pipe: a ring of `slots` buffers that a producer queue fills and a consumer queue empties,
 * the synchronisation protocol of every kernel's streams. The producer takes the next slot
 * (emit_pipe_take returns its index): from the (slots+1)-th take on it first waits for the
 * consumer's release of that slot, a `free_flag` raised on the producer's queue by
 * emit_pipe_give. emit_pipe_drain makes the producer wait for every release still owed, so the
 * flag is zero again when the buffers go: a kernel drains its pipes at its end; a pipe whose
 * buffers a plan keeps across kernels would drain when they are freed. A pipe with waits = 0
 * rides on another one's releases (W when it is loaded and released exactly with A): it counts
 * takes but neither waits nor is given back. */
typedef struct {
  int prod, prod_slot;          /* the producer's queue and its slot on the core */
  int free_flag;
  int slots, waits;
  int64_t n;                    /* takes so far */
} EmitPipe;
EmitPipe emit_pipe(int prod, int prod_slot, int free_flag, int waits);
int emit_pipe_take(Emit *e, EmitPipe *p);
void emit_pipe_give(Emit *e, EmitPipe *p, int from);
void emit_pipe_drain(Emit *e, EmitPipe *p);
/* op: I_SEMPOST or I_SEMWAIT, of a cluster semaphore. */
void emit_sem(Emit *e, int qi, GsOpcode op, int64_t id);
/* mov: src pattern `ss` (off relative to the src region), dst pattern `ds`. */
void emit_mov(Emit *e, int qi, uint32_t dr, uint32_t dt, const GsSpan *ds, uint32_t sr, uint32_t st,
              const GsSpan *ss);
/* A gather (an embedding's row lookup): emit_mov of the rows, naming the index list that selects
 * them, ibytes of region ir holding tile it (the simulator checks that read too). */
void emit_gather(Emit *e, int qi, uint32_t dr, uint32_t dt, const GsSpan *ds, uint32_t sr,
                 uint32_t st, const GsSpan *ss, uint32_t ir, uint32_t it, int64_t ibytes);
GsSpan emit_local_of(const GsSpan *s);
/* Tensor spans through their pieces (DDR or GB), counting the kernel's DDR bytes. */
void emit_load_span_at(Emit *e, const GsKernel *k, int qi, int c, int t, const GsSpan *s, uint32_t dreg,
                       uint32_t dtile, int64_t dst_off);
void emit_store_span(Emit *e, const GsKernel *k, int qi, int c, int t, const GsSpan *s, uint32_t sreg,
                     uint32_t stile);
/* A kernel's tile regions on one core (emit_lb_begin), each a first-fit block of the core's
 * allocator within the kernel's tile budget (emit_lb_region). */
void emit_lb_begin(Emit *e, LbAlloc *la, int c, int core, const GsKernel *k);
int emit_coord_q(Emit *e, int c);
/* A plan's slices over a run (emit_slices.c, when lower_keeps_slices): DDR areas and the first kernel's GB
 * slices at an iteration's start; at a kernel's start the frees of slices read for the last
 * time by the kernel before and the allocation of its LB slices; at its end the allocation of
 * the next kernel's GB slices; the rest at the iteration's end. */
void emit_slices_iteration_begin(Emit *e);
void emit_slices_kernel_begin(Emit *e, int ki);
void emit_slices_kernel_end(Emit *e, int ki);
void emit_slices_iteration_end(Emit *e);
uint32_t emit_lb_region(LbAlloc *la, int64_t bytes);
void emit_core_gemmvec(Emit *e, const GsKernel *k, const GsGeom *gm, int c, int core, int64_t ra,
                       int64_t rb, int64_t ca, int64_t cb);
void emit_core_copy(Emit *e, const GsKernel *k, int c, int core, int idx);
/* A kernel's later clusters as runs copied from cluster 0's queues (emit_copy.c): begin before
 * cluster 0's cores (NULL: the kernel cannot be copied, or copies are off), seal after them,
 * then per later cluster emit_copy_cluster (0: emit that cluster as usual), end after the
 * kernel's barrier. */
typedef struct EmitCopy EmitCopy;
EmitCopy *emit_copy_begin(Emit *e, int ki);
void emit_copy_seal(Emit *e, EmitCopy *m);
int emit_copy_cluster(Emit *e, EmitCopy *m, int c);
void emit_copy_end(Emit *e, EmitCopy *m);

#endif
