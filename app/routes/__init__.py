"""One router per resource; routes turn requests into commands and read views."""
