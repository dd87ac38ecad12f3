"""Decision: programs that write a buffer compile without joint-graph
constant folding.

Guarantee: when a method writes a buffer (a step counter, a KV cache,
running statistics: `buffers_to_mutate` in the functionalized graph
signature), its compile options turn Inductor's
`joint_graph_constant_folding` off, so every call starts from the buffer's
current value and the updates persist across calls. Programs that write no
buffer keep the default (folding constants is a real speed-up for them).

Why: with folding on, torch 2.11 Inductor treats the buffer's initial value
as a constant and folds the update into the program: a one-element counter
`n.add_(1); return x + n` returns `x + 1` on every call (measured on the CPU
with torch's own AOTInductor runner: calls 2 and 3 differ from eager by 1
and 2; the same on the GPU).
"""

from typing import List, Optional, Tuple

from ..program_meta import writes_buffers

OPTION = "joint_graph_constant_folding"


def written_buffers(ep) -> List[str]:
    """FQNs of the buffers the program writes."""
    names = set(ep.graph_signature.buffers_to_mutate.values())
    if not names and writes_buffers(ep):
        names = set(ep.run_decompositions({}).graph_signature
                    .buffers_to_mutate.values())
    return sorted(names)


def constant_folding_decision(ep) -> Tuple[dict, Optional[str]]:
    """(Inductor options to add, note or None)."""
    names = written_buffers(ep)
    if not names:
        return {}, None
    shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
    return {OPTION: False}, (
        f"the program writes buffer(s) {shown}: joint-graph constant "
        "folding off (else their updates would be folded away)")
