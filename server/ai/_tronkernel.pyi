"""Types of the Tron AI's optional compiled kernel (server/ai/_tronkernel.c); see tron_ai._Kernel."""

from types import NotImplementedType

CELL: int
APART: int
APART_CELL: int
WIN: int
DOOMED: int
MAX_STRIDE: int
MAX_ROWS: int

def split(
    free: int, stride: int, first: int, second: int, first_ahead: bool, /
) -> tuple[int, int, bool] | NotImplementedType: ...
def chamber_value(territory: int, free: int, stride: int, head: int, edge: int, /) -> int | NotImplementedType: ...
def chamber_fill(free: int, stride: int, head: int, /) -> int | NotImplementedType: ...
def chain_fill(free: int, stride: int, head: int, /) -> int | NotImplementedType: ...
def territory_score(
    stride: int, free: int, first: int, second: int, first_ahead: bool, draw: int, edge: int, chains: bool, /
) -> int | NotImplementedType: ...
def room_after(free: int, stride: int, head: int, /) -> int | NotImplementedType: ...
def greedy_ride(
    free: int, stride: int, head: int, deadline: float, /
) -> tuple[list[int], bool] | NotImplementedType: ...
def contact_search(
    free: int,
    stride: int,
    ours: int,
    theirs: int,
    draw_penalty: int,
    edge: int,
    chains: bool,
    deadline: float,
    max_depth: int,
    reduction: int = ...,
    pinned_deadline: float = ...,
    tie_draw: int = ...,
    /,
) -> tuple[int, int, int, int, tuple[int, ...]] | NotImplementedType: ...
