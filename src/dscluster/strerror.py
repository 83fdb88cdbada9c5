"""The C library's error texts (strerror) and the dynamic loader's, as glibc prints them in English and in the
languages its po files translate them to that users run (zh_TW, zh_CN, ja, de, fr, es; an older wording of a
catalog too): C programs print them as `PROG: PATH: TEXT`, Python as `[Errno N] TEXT: 'PATH'` (in English, as Python
does not set the messages locale). Read by the explainer's signatures (signatures.py, sigmessages.py, errorline.py).
"""

from __future__ import annotations

# glibc's strerror texts (po/*.po: zh_TW, zh_CN, ja, de, fr (both its wordings), es).
ENOENT = (r"No such file or directory|沒有此一檔案或目錄|没有那个文件或目录|そのようなファイルやディレクトリはありません|"
          r"Datei oder Verzeichnis nicht gefunden|Aucun fichier ou dossier de ce (?:type|nom)|"
          r"No existe el fichero o el directorio")
EACCES = r"Permission denied|拒絕不符權限的操作|权限不够|許可がありません|Keine Berechtigung|Permission non accordée|Permiso denegado"
EROFS = (r"Read-only file system|唯讀的檔案系統|只读文件系统|読み込み専用ファイルシステムです|Das Dateisystem ist nur lesbar|"
         r"Système de fichiers accessible en lecture seulement|Sistema de ficheros de sólo lectura")
ENOMEM = (r"Cannot allocate memory|無法配置記憶體|无法分配内存|メモリを確保できません|Nicht genügend Hauptspeicher verfügbar|"
          r"Ne peut allouer de la mémoire|No se pudo asignar memoria")
ENOSPC = (r"No space left on device|裝置上已無多餘空間|设备上没有空间|デバイスに空き領域がありません|"
          r"Auf dem Gerät ist kein Speicherplatz mehr verfügbar|Aucun espace disponible sur le périphérique|"
          r"No queda espacio en el dispositivo")
EDQUOT = (r"Disk quota exceeded|磁碟配額已滿|超出磁盘配额|ディスク使用量制限を超過しました|"
          r"Der zugewiesene Plattenplatz \(Quota\) ist überschritten|Débordement du quota d'espace disque|"
          r"Se ha excedido la cuota de disco")
EMFILE = (r"Too many open files|開啟太多檔案|打开的文件过多|ファイルを開きすぎです|Zu viele offene Dateien|Trop de fichiers ouverts|"
          r"Demasiados ficheros abiertos")
EIO = (r"Input/output error|輸入/輸出錯誤|输入/输出错误|入力/出力エラーです|Eingabe-/Ausgabefehler|Erreur d'entrée/sortie|"
       r"Error de entrada/salida")
# The dynamic loader's "error while loading shared libraries" (glibc's po files, the older zh_CN wordings too).
LOADER = (r"error while loading shared libraries|載入共用函式庫時發生錯誤|[加载装]入?共享库时出错|加载共享库时出错|"
          r"共有ライブラリのロード中にエラーが発生しました|Fehler beim Laden der Shared Libraries|"
          r"erreur lors du chargement des librairies partagées|error al cargar las bibliotecas compartidas")
