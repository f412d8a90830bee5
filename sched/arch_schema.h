/* arch_schema.h — the config schema table shared by the parser (arch.c) and the report and
 * documentation writers (arch_report.c). Not part of the public contract: other modules use
 * arch.h only.
 *
 * One row per key: {section, key, type, unit, range, default or required, applies-when,
 * description, destination field}. Keys of [core.NAME] and [unit.NAME] sections repeat per
 * section. The per-dtype and per-cost-class keys (rate_*, lanes_*, cost_*) are generated
 * from the GS_DTYPES and GS_VCLASSES X-macros, so a new dtype gets its keys automatically.
 */
#ifndef GS_ARCH_SCHEMA_H
#define GS_ARCH_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"

typedef enum { SEC_CHIP, SEC_DDR, SEC_CLUSTER, SEC_CORE, SEC_UNIT, SEC_ENERGY, SEC_KINDS } ArchSecKind;

typedef enum {
  KT_STR,   /* free text (arena string) */
  KT_INT,   /* decimal integer -> int */
  KT_FLOAT, /* decimal number -> double */
  KT_SIZE,  /* decimal integer in the key's unit -> int64_t bytes (× scale) */
  KT_ENUM,  /* one word of `choices` ("a|b") -> int, the word's index */
  KT_CLASS, /* comma list of matrix, vector, scalar -> unsigned CAP_* bits */
  KT_UNITS, /* comma list of [unit.NAME] names -> GsCoreKind.unit[] / nunits */
} ArchKeyType;

/* When a key applies. The first three are lenient: a key of an absent buffer (size 0) may be
 * set and is then unused. The unit conditions are strict: setting e.g. cube_m on a systolic
 * unit is an error, because it says the author believes something the config does not. */
typedef enum {
  KW_ALWAYS,
  KW_GB,       /* [cluster] gb_kib > 0 */
  KW_LB,       /* [core.*] lb_kib > 0 */
  KW_DRAM,     /* [ddr] model = dram */
  KW_MATRIX,   /* class contains matrix */
  KW_CUBE,     /* matrix and shape = cube */
  KW_SYSTOLIC, /* matrix and shape = systolic */
  KW_VECTOR,   /* class contains vector */
  KW_SCALAR,   /* class contains scalar */
  /* Energy keys apply only when the config has an [energy] section; set without one they are
   * an error (strict). With one, the buffer ones are lenient like KW_GB/KW_LB, the unit ones
   * strict like KW_MATRIX.. */
  KW_ENERGY,   /* [energy] exists */
  KW_E_GB,     /* [energy] exists and gb_kib > 0 */
  KW_E_LB,     /* [energy] exists and lb_kib > 0 */
  KW_E_MATRIX, /* [energy] exists and class contains matrix */
  KW_E_VECTOR, /* [energy] exists and class contains vector */
  KW_E_SCALAR, /* [energy] exists and class contains scalar */
} ArchWhen;

typedef struct {
  ArchSecKind sec;
  const char *key;
  ArchKeyType type;
  const char *unit;   /* unit of the value as written ("MHz", "cycles", "" if none) */
  double min, max;    /* allowed range of the value as written (numeric types) */
  int min_exclusive;  /* 1: value must be > min */
  int zero_ok;        /* 1: 0 is allowed too (it means "none": an unsupported dtype, no link) */
  const char *def;    /* default as written in a file; NULL: required (when it applies) */
  ArchWhen when;
  const char *desc;
  size_t off;         /* destination: offset into GsArch, GsCoreKind or GsUnitKind */
  int64_t scale;      /* KT_SIZE: bytes per unit of the value */
  const char *choices;/* KT_ENUM: words separated by '|', index = stored value */
} ArchKey;

extern const ArchKey arch_keys[];
extern const int arch_nkeys;
extern const char *const arch_sec_names[SEC_KINDS]; /* "chip", "ddr", "cluster", "core", "unit",
                                                       "energy" */

/* Does key k apply to the section whose struct is `obj` (GsArch, GsCoreKind or GsUnitKind)?
 * `a` gives the [cluster] context for KW_GB. */
int arch_key_applies(const ArchKey *k, const GsArch *a, const void *obj);
/* The value of key k in obj, formatted as it would be written in a config file. */
void arch_format_value(const ArchKey *k, const GsArch *a, const void *obj, char *buf, size_t n);
/* Pointer to the struct a key of section kind `sec` lives in (index: core or unit kind). */
const void *arch_section_obj(const GsArch *a, ArchSecKind sec, int index);
/* Is a key that does not apply here an error (strict), rather than set and ignored? */
int arch_key_strict(const ArchKey *k, const GsArch *a);
/* The name of a CAP_* bit ("matrix", ...). */
const char *arch_cap_name(unsigned cap);

#endif
