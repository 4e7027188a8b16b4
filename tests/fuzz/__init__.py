"""The fuzz suite: a fixed-seed mutator over every reader of untrusted input."""
