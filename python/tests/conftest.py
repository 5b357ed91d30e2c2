import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A small device (64 blocks × 32 pages × 4 planes) so that runs take milliseconds.
SMALL = {
    "device.channels": 2,
    "device.chips_per_channel": 1,
    "device.dies_per_chip": 2,
    "device.planes_per_die": 1,
    "device.blocks_per_plane": 64,
    "device.pages_per_block": 32,
}


@pytest.fixture
def small():
    return dict(SMALL)


@pytest.fixture
def base_toml(tmp_path):
    p = tmp_path / "base.toml"
    p.write_text(
        "[device]\nchannels = 2\nchips_per_channel = 1\ndies_per_chip = 2\nplanes_per_die = 1\n"
        "blocks_per_plane = 64\npages_per_block = 32\n[workload]\nrequests = 20000\n"
    )
    return p


@pytest.fixture
def trace_csv(tmp_path):
    """A small csv-format trace: writes then reads, times from 0."""
    p = tmp_path / "t.csv"
    lines = ["time_ns,op,offset_bytes,len_bytes,device"]
    t = 0
    for i in range(3000):
        op = "write" if i % 3 else "read"
        lines.append(f"{t},{op},{(i * 7919 % 2000) * 4096},{4096 * (1 + i % 3)},0")
        t += 40_000
    p.write_text("\n".join(lines) + "\n")
    return p
