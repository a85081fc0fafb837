"""One person across apps: the config's `identities` plus accounts linked at pairing (`approve … --as`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping


class Identities:
    """Which person an account (`channel:user_id`) belongs to, and a person's accounts."""

    def __init__(self, configured: Mapping[str, list[str]], linked: Callable[[], Mapping[str, str]] = dict) -> None:
        self._configured = {account: person for person, accounts in configured.items() for account in accounts}
        self._people = frozenset(configured)
        self._linked = linked

    def person_of(self, channel: str, user_id: str) -> str | None:
        """The person the account belongs to (the config wins over a pairing link), or None."""
        account = f"{channel}:{user_id}"
        return self._configured.get(account) or self._linked().get(account)

    def accounts_of(self, person: str) -> set[str]:
        """Every account of the person, configured or linked."""
        linked = {account for account, name in self._linked().items() if name == person}
        return {account for account, name in self._configured.items() if name == person} | linked

    def is_person(self, name: str) -> bool:
        """Whether `name` is a person the config or a pairing link knows."""
        return name in self._people or name in set(self._linked().values())

    def refs_of(self, channel: str, user_id: str) -> tuple[str | None, set[str]]:
        """The account's person, and every name roles and owners may list it under: its accounts and the person."""
        person = self.person_of(channel, user_id)
        if person is None:
            return None, {f"{channel}:{user_id}"}
        return person, {person, f"{channel}:{user_id}", *self.accounts_of(person)}


NOBODY = Identities({})
"""No identities: every account is its own person."""
