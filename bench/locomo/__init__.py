"""The LoCoMo development-set bench (`python bench/recall.py --locomo DIR`): conversations played through the real
gateway, and evidence coverage of what the model holds, as ../shared/MEMORY_EVAL.md defines them."""

from rig import ROOT  # noqa: F401  (puts this repository ahead on sys.path before anything imports bot)
