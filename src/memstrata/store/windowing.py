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

from collections.abc import Sequence

#: Turns before a raw turn that its window holds at least (where there are that many).
SPAN = 2
#: A window takes in earlier turns beyond :data:`SPAN` while it holds fewer tokens than this...
WINDOW_TOKENS = 80
#: ...up to this many turns before its own.
REACH = 6


def reach(own: float, before: Sequence[float]) -> int:
    """How many turns back the window of a turn of ``own`` tokens reaches, given the token
    counts of the turns ``before`` it, nearest first."""
    words, back = own, 0
    for length in before[:REACH]:
        if back >= SPAN and words >= WINDOW_TOKENS:
            break
        words += length
        back += 1
    return back
