"""Shared test helpers: faithful local doubles of services that cannot run here."""
