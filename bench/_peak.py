"""The peak resident memory of this process alone, for benchmarks that measure in child processes.

``resource.getrusage(RUSAGE_SELF).ru_maxrss`` is no such figure in a child:
Linux keeps the high-water mark across fork and exec, so a child started by
a parent that once held 2 GiB reports 2 GiB whatever it used itself.
``VmHWM`` in ``/proc/self/status`` is the peak of the process's own address
space, which exec replaces, so it starts afresh in every child.
"""
from __future__ import annotations

import resource


def own_peak_mib() -> float:
    """This process's own peak resident memory in MiB (``VmHWM``; ``ru_maxrss`` where /proc is missing)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
