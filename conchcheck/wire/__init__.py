"""The wire layer: one adapter per chat API family, the provider registry, catalogues, HTTP."""
