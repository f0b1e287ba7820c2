"""Software-defined assets of the APAC tenant signal pipeline."""
