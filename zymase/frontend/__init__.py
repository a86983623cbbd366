"""The frontend: Python functions (their ``ast``) and concrete argument types -> typed IR."""
