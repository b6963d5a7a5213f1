"""les_molecules: the optional SELFIES molecules pipeline of les (MOSES SMILES from the molsets wheel).

Registered by paper_pipelines.pipeline_registry as an optional pipeline, not a paper: it reuses les's
VAE, scores, baselines and optimiser with the molecules' data, objective and quality check.
"""
