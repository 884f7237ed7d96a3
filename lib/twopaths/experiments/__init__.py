"""Small seeded training and measurement loops the chapters run."""
