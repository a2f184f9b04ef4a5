"""The engine adapter: engines that speak GTP, NBoard, the 2010 Tron protocol or JSON lines play on gamenight."""
