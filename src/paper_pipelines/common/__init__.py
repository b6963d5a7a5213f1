"""Code that two or more papers share: parameter validation, seeding, devices, offline models."""
