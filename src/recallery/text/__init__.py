"""Text as the keyword index sees it, in every language: :mod:`.analyzer` turns a stored text
or a query into terms, :mod:`.scripts` splits and normalises text by script, and
:mod:`.stopwords` declares each language's function words once."""
