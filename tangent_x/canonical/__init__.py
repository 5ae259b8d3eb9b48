"""Parse stage -> canonical stage: Python source becomes the canonical IR
(one primitive per equation, structured control flow)."""
