"""The context window a chat request needs, and whether the server cut the prompt to fit it.

Ollama evaluates a prompt in a window of `num_ctx` tokens (its default, 2048 or 4096 depending on
the version, is smaller than a SAGE prompt) and, when the prompt is longer, cuts it from the
front without an error: it keeps the first `num_keep` tokens (4 by default) and drops the next
ones until the rest fits ("truncating input prompt limit=4096 prompt=7268 keep=4 new=4096" in its
log). What is dropped is the system prompt and the domain, so the model plans on a fragment. A
`ContextWindow` prevents that and detects it when it happens anyway:

* **Size.** `prompt_token_bound` bounds a prompt's tokens from above without a tokenizer: one
  token per `CHARS_PER_TOKEN_BOUND` characters plus `TEMPLATE_TOKENS_PER_MESSAGE` for each
  message's chat-template markers. The BPE tokenizers of the models we serve average 3.5 to 4.5
  characters per token on English and PDDL text, so 2 is a wide margin.
* **Window.** A request asks for the bound plus the tokens kept for the answer (`num_predict`
  when the backend sets it, else `ANSWER_TOKENS`), rounded up to a power of two, at least
  `MIN_CONTEXT`, at most the cap (`max_context`, default `DEFAULT_MAX_CONTEXT`; `--max-context`
  on the command line, `max_context` in a bench config). A different `num_ctx` makes Ollama
  reload the model and drop its prompt cache, so a backend's window only grows: it is the
  largest any of its requests has needed, and takes at most a handful of sizes over a run.
  A `num_ctx` given explicitly (an `options` entry) is used as it is, never changed.
* **Check.** The server's own count of the prompt's tokens (`prompt_eval_count`) is compared
  with the window sent: a count that leaves less than the answer's tokens free means the prompt
  was cut (a cut prompt is exactly the window long) or that the answer would push it out (Ollama
  then shifts the context, dropping the prompt's front again). Either way the call fails with
  `PromptTooLong`, naming the counts, instead of returning a plan made from a fragment. A
  server that reports no count (0 after a prompt-cache hit on old Ollama versions) cannot be
  checked; the window's margin is what protects those calls.

A prompt whose bound is above the cap is still sent, with the cap as its window: the bound is
conservative, and the server's count says whether it fit.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from .base import Messages
from .errors import LLMConfigError, PromptTooLong

CHARS_PER_TOKEN_BOUND = 2
TEMPLATE_TOKENS_PER_MESSAGE = 8
ANSWER_TOKENS = 1024
MIN_CONTEXT = 2048
DEFAULT_MAX_CONTEXT = 32768


def prompt_token_bound(messages: Messages) -> int:
    """An upper bound on the tokens of `messages` as a chat template renders them."""
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN_BOUND) + TEMPLATE_TOKENS_PER_MESSAGE * len(messages)


def positive_tokens(option: str, value: Any) -> int:
    """A token count setting as an int >= 1, or `LLMConfigError` naming the setting."""
    try:
        tokens = int(value)
    except (TypeError, ValueError):
        raise LLMConfigError(f"option {option!r} must be a whole number of tokens, "
                             f"got {value!r}") from None
    if isinstance(value, bool) or tokens < 1 or (isinstance(value, float) and tokens != value):
        raise LLMConfigError(f"option {option!r} must be a whole number of tokens >= 1, "
                             f"got {value!r}")
    return tokens


class ContextWindow:
    """The `num_ctx` of each request of one backend, and the check of the server's count
    (see the module docstring). Thread-safe: a benchmark's workers share a backend."""

    def __init__(self, max_context: int = DEFAULT_MAX_CONTEXT,
                 options: Mapping[str, Any] | None = None):
        options = options or {}
        self.max_context = positive_tokens("max_context", max_context)
        self.fixed = (positive_tokens("num_ctx", options["num_ctx"])
                      if options.get("num_ctx") is not None else None)
        predict = options.get("num_predict")
        self.answer_tokens = (positive_tokens("num_predict", predict)
                              if predict is not None and int(predict) > 0 else ANSWER_TOKENS)
        self._grown = 0
        self._lock = threading.Lock()

    def for_prompt(self, messages: Messages) -> int:
        """The `num_ctx` to send with `messages`."""
        if self.fixed is not None:
            return self.fixed
        needed = prompt_token_bound(messages) + self.answer_tokens
        size = min(self.max_context, max(MIN_CONTEXT, 1 << (needed - 1).bit_length()))
        with self._lock:
            self._grown = max(self._grown, size)
            return self._grown

    def check(self, prompt_tokens: int | None, window: int, host: str) -> None:
        """`PromptTooLong` when the server's count of the prompt leaves no room for the answer
        in `window` (the prompt was cut, or would be while answering)."""
        if not prompt_tokens or prompt_tokens + self.answer_tokens <= window:
            return
        if self.fixed is not None:
            remedy = f"raise num_ctx (now {self.fixed})"
        elif window >= self.max_context:
            remedy = (f"raise the cap with --max-context (now {self.max_context}) if the model "
                      "supports a longer context, or use a model that does")
        else:
            remedy = "this is a bug in the window's estimate; please report it"
        cut = ("so the server cut it from the front, dropping the system prompt and the domain"
               if prompt_tokens >= window else
               f"leaving less than the {self.answer_tokens} tokens kept for the answer")
        raise PromptTooLong(
            f"the prompt does not fit the context window of {host}: the server counted "
            f"{prompt_tokens} prompt tokens for num_ctx={window}, {cut}; the call fails rather "
            f"than plan on a cut prompt. {remedy[0].upper()}{remedy[1:]}")
