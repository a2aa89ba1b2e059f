"""How far back a conversation window reaches: the one rule both stores' keyword legs share.

A raw turn's window is itself and the raw turns before it in its conversation: at least
:data:`SPAN` of them, and more, up to :data:`REACH`, while the window holds fewer than
:data:`WINDOW_TOKENS` tokens (every word, stop words included, as BM25 counts a document's
length). Counting words rather than turns keeps a window about as long whether people write
paragraphs or send a sentence a message.

Because a window holds the words of the window before it plus its own turn's, it reaches at
most one turn further back than that window: a word the next window does not reach, no later
window reaches either. Both stores stop there.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: Turns before a raw turn that its window holds at least (where there are that many).
SPAN = 2
#: A window takes in earlier turns beyond :data:`SPAN` while it holds fewer tokens than this...
WINDOW_TOKENS = 80
#: ...up to this many turns before its own.
REACH = 6


def reaches(own: NDArray[np.float64], before: NDArray[np.float64]) -> NDArray[np.int8]:
    """How many turns back the window of each turn reaches: ``own`` holds the turns' token
    counts, ``before`` (a row per turn) the token counts of the turns before it, nearest
    first, one column per distance up to :data:`REACH`, negative where there is no such
    turn."""
    words = own.astype(np.float64)
    reach = np.zeros(len(own), np.int8)
    for k in range(min(before.shape[1], REACH)):
        more = (reach == k) & (before[:, k] >= 0) & ((reach < SPAN) | (words < WINDOW_TOKENS))
        if not more.any():
            break
        reach[more] += 1
        words[more] += before[more, k]
    return reach
