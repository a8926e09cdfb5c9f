"""A twenty-first held-out half (issue 44): families written without reading or running the
classification code; each case was checked only by printing the raw failure it provokes
(``python -m corpus_live.probe --half heldout21``). Run once against the finished engine, the
measure of generalization on libraries and tools it has never seen. Do not tune the engine on
them."""
