"""Operations of a running gateway: its control socket, reload, health, dashboard, retention, dead letters,
lock and leadership."""
