from libreyolo_profile.launcher import profile_main

if __name__ == "__main__":
    profile_main()
