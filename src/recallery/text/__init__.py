"""Text as the keyword index sees it, in every language: :mod:`.analyzer` turns a stored text
or a query into terms, :mod:`.scripts` splits and normalises text by script, and
:mod:`.stopwords` declares each language's function words once, and :mod:`.cues` reads a
query's time cues in its own language."""
