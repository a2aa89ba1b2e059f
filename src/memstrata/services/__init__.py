"""The engine facade, one concern per module; :class:`memstrata.engine.Engine` joins them."""
