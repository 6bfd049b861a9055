"""ACLs: bindings (binding.py), their durable store (store.py) and the authorizer."""
