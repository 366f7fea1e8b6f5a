"""cold.py: the peers' timer, the same measure as our side's `tilec run --cold` (and the tuner):
each run of fn alone between two CUDA events, after an L2 flush that reads a 256 MiB buffer
(more than twice the L2 of an H100 or H200), so fn finds none of its data in the L2 and pays
no write-back of the flush (triton.testing.do_bench zeroes its buffer instead: the L2 is left
full of dirty lines that the timed kernel writes back, about 11 us on an H100, which made short
kernels look slower than they are). The flush also keeps the GPU busy while the host queues
fn, so host overhead is not timed. Median in milliseconds."""
import statistics

_flush = {}


def cold_ms(fn, reps=100, warmup=10):
    import torch
    buf = _flush.get("buf")
    if buf is None:
        buf = _flush["buf"] = torch.zeros(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
    for start, end in events:
        buf.sum(dtype=torch.int32)  # reads the buffer; writes one number
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)
