"""The web voting server of ``fminspect rank serve`` (Starlette on uvicorn): participants vote
in a browser through their own link; the lab watches and stops the study on an admin page.
It sits beside :mod:`fminspect.gui`, above :mod:`fminspect.ranking`, whose store it writes
through, and knows no Qt."""
