"""Inside one point: its timeline on one clock, where the time went, and findings in words (`harness inspect`)."""
