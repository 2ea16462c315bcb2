"""The ground floor: what every layer above may use, and nothing of theirs.

settings (every environment variable and path), i18n (every sentence, in English and Korean,
from ../locales), exitcodes, results (the plain records a check produces and the JSON says),
toolchain (the Mojo compiler, MAX and the GPU this machine has), nofollow and cachetrust
(files reached without following links, a cache that runs nothing another user wrote),
sweep and prune (upkeep of the workbook's own folders).

Imports: the standard library and third-party packages only; no other layer.
"""
