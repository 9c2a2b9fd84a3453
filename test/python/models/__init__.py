"""Small reference models written against PyTorch and JAX for the tests."""
