"""Operations of a running gateway: its control socket, reload, health, dashboard, retention, lock and leadership."""
