"""What several test files share, imported as ``tests.support.<module>`` (a test file never imports another)."""
