"""GPU leases: the pure rules (`rules`), their files on storage (`files`), and a run's leases held while it
runs (`leasing`)."""
