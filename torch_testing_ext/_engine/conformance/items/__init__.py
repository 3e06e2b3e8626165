"""The contract's items, a module per area; importing this package registers them all."""
