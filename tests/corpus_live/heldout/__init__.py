"""Families written without reading the classification code: run once against the
finished engine, the measure of generalization. Do not tune the engine on them."""
