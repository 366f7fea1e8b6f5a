#!/usr/bin/env bash
# ncu profile of stdlib flash_fwd (d128, tuned config) beside SDPA's flash backend
set -u
dir=$(mktemp -d); tar -C "$dir" -xJf .carry/bin.tar.xz
export LD_LIBRARY_PATH="$dir/lib"; export TILE_PATH="$PWD/stdlib"; export TILE_TUNE=off
S=4096; B=4; H=16; D=128
args="batch=$B heads=$H kv_heads=$H seq_q=$S seq_k=$S q_sb=$((H*S*D)) q_sh=$((S*D)) q_ss=$D k_sb=$((H*S*D)) k_sh=$((S*D)) k_ss=$D v_sb=$((H*S*D)) v_sh=$((S*D)) v_ss=$D o_sb=$((H*S*D)) o_sh=$((S*D)) o_ss=$D scale=0.088 window=0 softcap=0 q=$((B*H*S*D)) k=$((B*H*S*D)) v=$((B*H*S*D)) o=$((B*H*S*D)) lse=1"
SECS="--section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis --page raw"
for cfg in "-D BLOCK_M=128 -D BLOCK_N=64 -D num_warps=4 -D num_stages=2"; do
  echo "=== tile $cfg"
  ncu --clock-control none $SECS -k regex:flash --launch-count 1 "$dir/bin/tilec" run stdlib/attention/flash_fwd.tile:flash_fwd $args -D HEAD_DIM=128 $cfg --backend=cuda --reps=2 2>&1 | grep -v "^==PROF==" | tail -n +1
done > $OUT/tile.txt
cat > /tmp/sdpa.py <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q = torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16)
k = torch.randn_like(q); v = torch.randn_like(q)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    for _ in range(2): o = F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
ncu --clock-control none $SECS -k regex:flash --launch-count 1 python3 /tmp/sdpa.py > $OUT/sdpa.txt 2>&1
echo done
ptxas -arch=sm_90a .prof/flash.ptx -o /tmp/flash.cubin && cuobjdump -sass /tmp/flash.cubin > $OUT/flash.sass 2>&1
grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z][A-Z0-9_.]*" $OUT/flash.sass | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -40 > $OUT/opmix.txt
