"""WAF against spare factor for greedy, FIFO and cost-benefit GC, with Desnoyers'
closed forms beside (uniform random single-page writes, steady state), as a PNG.

    python examples/python/sweep_spare_factor.py [--quick] [--out waf_spare_factor.png] [--jobs N]

The sweep runs in counting mode (no timing) on a small device: prefill, then aging
writes to reach steady state, then the measured writes. Each point is averaged over
seeds; the closed forms are the result object's `waf_closed_form` (flashlab-ftl's
`analytic` module: FIFO and greedy; cost-benefit has none).
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import flashlab  # noqa: E402

POLICIES = ["greedy", "fifo", "cost-benefit"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smaller device and fewer writes (seconds)")
    p.add_argument("--out", default="waf_spare_factor.png")
    p.add_argument("--jobs", type=int)
    a = p.parse_args(argv)

    blocks = 128 if a.quick else 1024
    spares = [0.07, 0.1, 0.15, 0.2, 0.3] if a.quick else [0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4]
    physical = blocks * 4 * 64  # pages: 4 planes of `blocks` blocks of 64 pages
    fulls = 2 if a.quick else 4  # aging and measured writes, in device-fulls
    overrides = {
        "device.channels": 1,
        "device.chips_per_channel": 1,
        "device.dies_per_chip": 2,
        "device.planes_per_die": 2,
        "device.blocks_per_plane": blocks,
        "device.pages_per_block": 64,
        "timing.enabled": False,
        "workload.pattern": "uniform",
        "workload.prefill": True,
        "workload.aging_writes": fulls * physical,
        "workload.requests": fulls * physical,
    }
    df = flashlab.sweep(
        flashlab.default_config(),
        {"gc.victim": POLICIES, "device.spare_factor": spares},
        seeds=[1, 2] if a.quick else [1, 2, 3],
        overrides=overrides,
        jobs=a.jobs,
    )
    mean = df.groupby(["gc.victim", "device.spare_factor"], sort=False)[["waf", "waf_closed_form"]].mean().reset_index()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, policy in enumerate(POLICIES):
        d = mean[mean["gc.victim"] == policy]
        ax.plot(d["device.spare_factor"], d["waf"], "o-", color=f"C{i}", label=f"{policy} (simulated)")
        if d["waf_closed_form"].notna().all():
            ax.plot(d["device.spare_factor"], d["waf_closed_form"], "--", color=f"C{i}", label=f"{policy} (Desnoyers)")
    ax.set_xlabel("spare factor (1 − logical / physical)")
    ax.set_ylabel("write amplification (WAF)")
    ax.set_title("WAF against spare factor, uniform random writes")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(mean.to_string(index=False))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
