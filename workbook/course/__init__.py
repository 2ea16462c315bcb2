"""The course: puzzles as their folders and manifests say, and the learner's own files.

catalog (the manifest, the single source of truth for a puzzle), skeleton (skeletons derived
from solutions), learner (what counts as a learner's file, and how one is written), state
(progress), backups (nothing a learner wrote is lost), workspace (a workspace of one's own),
gating (what a puzzle needs of a GPU).

Imports: core.
"""
