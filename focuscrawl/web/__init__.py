"""The web side: URLs as focuscrawl normalises and keys them, and the corpus format of
the webs the web-in-a-box serves."""
