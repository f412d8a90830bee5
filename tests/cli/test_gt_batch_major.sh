#!/usr/bin/env bash
# test_gt_batch_major.sh — a layer whose rows are not batch-major in a group that GraphTurbo
# splits over the batch. BERT's [1, 128, 768] position table has 128 rows whatever the batch;
# 128 divides by the batch, but its rows are not the samples' (every sample reads all of them).
# docs/graphturbo.md ("An instance is a group restricted to samples"): such a group runs as one
# instance over the cluster's whole share, with a note. Before the fix the kernel generator took
# 128 / B rows of the table as each sample's, an instance of samples [s0, s1) made only those
# rows, and the add reading the whole table found no piece holding byte 0 (exit 3), or, across
# clusters, read bytes no kernel wrote (exit 2).
#   1. the report's case: bert-128 on ascend310 at batch 8;
#   2. the same pattern in five ops, split by the schedule into one instance per sample, on one
#      cluster (ascend310) and on two (tiny);
#   3. a dense and a matmul whose outputs are not batch-major ([1, ...]) on tiny's two clusters:
#      their rows were split over the clusters as if per sample, and a reader on one cluster
#      found no piece of the other's rows (exit 3). They run on cluster 0 (docs/schedulers.md).
set -u
. "$(dirname "$0")/lib.sh"

# 1. BERT-128 on ascend310 at batch 8: the embedding group (with emb.pos) is split over the batch.
if "$GTSIM" --arch configs/ascend310.cfg workloads/bert-128.gtg --batch 8 >"$tmp/bert.txt" 2>"$tmp/err"; then
  ok "bert-128 on ascend310 at batch 8 runs (exit 0)"
  grep -q "^note  *layer 'emb.pos' is not batch-major; each runs as one instance: g0$" "$tmp/bert.txt" &&
    ok "bert-128: the embedding group runs as one instance, with a note" ||
    nok "bert-128: note" "$(grep '^note' "$tmp/bert.txt")"
else
  nok "bert-128 on ascend310 at batch 8 runs" "exit $?: $(head -c 300 "$tmp/err" | tr "\n" " ")"
fi

# 2. Token rows w[N, 128, 256] plus a position table p[1, 128, 256], layernorm, softmax over the
# sequence. Split factors match dim 0 on w, s, y, z and dim 1 on w, p, s, y only (z reduces
# it): Eq. 1 takes dim 0 (the tie goes to the outer dim), and with a 200000-byte LB (the peak is
# 2 x 163840 B at batch 2) the group is two instances of one sample each.
cat >"$tmp/pos.gtg" <<'G'
gtg 1
model pos batch=2 dtype=fp16
input ids: int32[N, 128]
input positions: int32[1, 128]
w = embedding(ids) vocab=1000 dim=256
p = embedding(positions) vocab=128 dim=256
s = add(w, p)
y = layernorm(s)
z = softmax(y) axis=1
G
for cb in "ascend310 2" "tiny 4"; do
  set -- $cb
  A=(--arch "configs/$1.cfg" "$tmp/pos.gtg" --batch "$2" --gt-lb-bytes 200000)
  "$GTSIM" "${A[@]}" --dump-schedule >"$tmp/s.txt" 2>"$tmp/err"
  grep -q "^  g0.1 dim0\[1,2)" "$tmp/s.txt" && ok "$1 batch $2: the schedule splits the group per sample" ||
    nok "$1 batch $2: the schedule splits the group per sample" "$(grep '^  g0' "$tmp/s.txt") $(head -c 300 "$tmp/err" | tr "\n" " ")"
  if "$GTSIM" "${A[@]}" >"$tmp/r.txt" 2>"$tmp/err"; then
    ok "$1 batch $2: the run passes every check (exit 0)"
    grep -q "^note  *layer 'p' is not batch-major; each runs as one instance: g0$" "$tmp/r.txt" &&
      ok "$1 batch $2: the group runs as one instance, with a note" || nok "$1 batch $2: note" "$(grep '^note' "$tmp/r.txt")"
  else
    nok "$1 batch $2: the run passes every check" "exit $?: $(head -c 300 "$tmp/err" | tr "\n" " ")"
  fi
done

# 3. pd = dense(position table) and m = matmul of two [1, 4, ...] operands, each added to a
# batch-major tensor; batch 2 = one sample per cluster of tiny.
# (dense.gtg: the inputs and tables of pos.gtg above)
{ sed -n '1,6p' "$tmp/pos.gtg" | sed 's/^model pos /model pos_dense /'; cat <<'G'; } >"$tmp/dense.gtg"
pd = dense(p) units=256 bias=1
s = add(w, pd)
y = layernorm(s)
G
cat >"$tmp/matmul.gtg" <<'G'
gtg 1
model bias_matmul batch=2 dtype=fp16
input x: fp16[N, 4, 128, 128]
input q: fp16[1, 4, 128, 64]
input k: fp16[1, 4, 64, 128]
m = matmul(q, k)
s = add(x, m)
y = softmax(s) axis=3
G
for m in dense matmul; do
  op=$([ $m = dense ] && echo pd || echo m)
  "$GTSIM" --arch configs/tiny.cfg "$tmp/$m.gtg" --dump-after placement >"$tmp/pl.txt" 2>"$tmp/err"
  grep -q "^k[0-9]* ops=$op:$m .* clusters=0 " "$tmp/pl.txt" && ok "$m over [1, ...] runs on cluster 0" ||
    nok "$m over [1, ...] runs on cluster 0" "$(grep " ops=$op:" "$tmp/pl.txt") $(head -c 300 "$tmp/err" | tr "\n" " ")"
  for s in graphturbo tvm astitch; do
    "$GTSIM" --arch configs/tiny.cfg "$tmp/$m.gtg" --sched $s -o /dev/null 2>"$tmp/err"
    check_rc "$m over [1, ...] on two clusters, $s: passes every check" $? "$(head -c 300 "$tmp/err" | tr "\n" " ")"
  done
done

done_testing
