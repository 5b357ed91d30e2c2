"""Speed cost of a GC victim policy written in Python against the built-in ones
(docs/performance.md, "Python and sweeps"). Run: python python/benchmarks/victim.py"""
import time, flashlab
over = {"device.channels": 2, "device.chips_per_channel": 1, "device.dies_per_chip": 2, "device.planes_per_die": 1,
        "device.blocks_per_plane": 256, "device.pages_per_block": 64, "workload.requests": 400000,
        "workload.prefill": True, "timing.enabled": False}
def best(f):
    ts=[]
    for _ in range(3):
        t=time.perf_counter(); r=f(); ts.append(time.perf_counter()-t)
    return min(ts), r
for name in ["greedy", "cost-benefit"]:
    t, r = best(lambda: flashlab.run({}, dict(over, **{"gc.victim": name})))
    print(f"builtin {name}: {t:.3f} s, gc_runs {r.gc_runs}")
t, r = best(lambda: flashlab.run({}, over, gc_victim=lambda c: min(c, key=lambda b: b.valid)))
print(f"python greedy: {t:.3f} s, gc_runs {r.gc_runs}")
def cb(c):
    return max(c, key=lambda b: (1 - b.valid / c.pages_per_block) * b.age / (1 + b.valid / c.pages_per_block))
t, r = best(lambda: flashlab.run({}, over, gc_victim=cb))
print(f"python cost-benefit: {t:.3f} s, gc_runs {r.gc_runs}")
